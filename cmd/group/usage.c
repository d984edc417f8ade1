/*
 * klog-group's help text: the commands, users' and acls' (their own
 * files), then the options and the exit status.
 */
#include <stdio.h>

#include "group/acls.h"
#include "group/usage.h"
#include "group/users.h"

#define PROG "klog-group"

static void usage_options(FILE *f);

void
group_usage(FILE *f)
{
	fprintf(f,
	    "usage: " PROG " [-HJ] [-b broker | -Z connect] [-T timeout] "
	    "[-X key=value] [-F file]\n"
	    "                  command [options]\n"
	    "Administer consumer groups stored in ZooKeeper, topics, and "
	    "a broker's users and ACLs.\n"
	    "\n"
	    "commands:\n"
	    "  list                        groups and their live members\n"
	    "  describe -g group [-t topic]\n"
	    "                              committed offsets, log ends, lag "
	    "and owners\n"
	    "  reset -g group -t topic --to-earliest|--to-latest|"
	    "--to-offset N|--to-time T\n"
	    "        -n|--execute [-f]     move the group's offsets\n"
	    "  delete -g group             delete a group without live "
	    "members\n"
	    "  topics [-t topic]           topics, partitions and their "
	    "brokers\n"
	    "  create-topic -t topic --partitions N --replication-factor R\n"
	    "        [--min-insync-replicas M]\n"
	    "                              create a replicated topic over "
	    "the live brokers\n"
	    "  alter-topic -t topic --partitions N\n"
	    "                              add partitions to a replicated "
	    "topic (never fewer)\n"
	    "  delete-topic -t topic       delete a replicated topic and "
	    "every broker's copy\n"
	    "  brokers                     live brokers\n"
	    "\n"
	    "  with -b, a standalone broker's own topics:\n"
	    "  create-topic -t topic --partitions N\n"
	    "                              create a topic on the broker\n"
	    "  alter-topic -t topic --partitions N\n"
	    "                              add partitions (never fewer)\n"
	    "  delete-topic -t topic       delete the topic and its data\n"
	    "\n");
	users_usage(f);
	group_acls_usage(f);
	usage_options(f);
}

static void
usage_options(FILE *f)
{
	fprintf(f,
	    "\n"
	    "  -b, --broker HOST:PORT   the broker of create-topic, "
	    "alter-topic, delete-topic\n"
	    "  -Z, --zookeeper CONNECT  host:port[,host:port...][/chroot] "
	    "(default: $KLOG_ZOOKEEPER)\n"
	    "      --zk-auth-file FILE  ZooKeeper digest identity, one line "
	    "user:password:\n"
	    "                           needed to change what brokers made "
	    "with one\n"
	    "  -X, --property KEY=VALUE a security property, librdkafka's "
	    "name, as kcat -X:\n"
	    "                           security.protocol, "
	    "ssl.ca.location, sasl.mechanism,\n"
	    "                           ... (klog-security(7)); a password "
	    "given so shows in ps\n"
	    "  -F, --property-file FILE KEY=VALUE lines of those (kcat -F); "
	    "the password may\n"
	    "                           also come from "
	    "$KLOG_SASL_PASSWORD\n"
	    "  -T, --timeout DURATION   wait this long for ZooKeeper and "
	    "brokers (default 10s)\n"
	    "  -g, --group GROUP        the consumer group\n"
	    "  -t, --topic TOPIC        the topic\n"
	    "  -H, --no-header          no header line (for awk)\n"
	    "  -J, --json               one JSON object per line\n"
	    "      --to-earliest        reset to each partition's first "
	    "offset\n"
	    "      --to-latest          reset to each partition's end\n"
	    "      --to-offset N        reset every partition to offset N\n"
	    "      --to-time T          reset to the first record stamped "
	    "at or after T\n"
	    "                           (ms since the epoch, or "
	    "YYYY-MM-DDTHH:MM:SSZ)\n"
	    "  -n, --dry-run            show what reset would do\n"
	    "      --execute            do it\n"
	    "  -f, --force              reset even while members are live; "
	    "acls remove\n"
	    "                           without a principal: every ACL of "
	    "the resource\n"
	    "      --partitions N       create-topic, alter-topic: number of "
	    "partitions\n"
	    "      --replication-factor R\n"
	    "                           create-topic: replicas of each "
	    "partition\n"
	    "      --min-insync-replicas M\n"
	    "                           create-topic: in-sync replicas "
	    "acks=all needs\n"
	    "                           (default 1)\n"
	    "  -h, --help               print this help\n"
	    "      --version            print the version\n"
	    "\n"
	    "Exit status: 0 ok, 1 failure (or refused, by ZooKeeper or the "
	    "broker; or no ACL\nto remove), 64 usage, 65 corrupt data (a "
	    "malformed users or ACL file), 69\nZooKeeper or broker "
	    "unavailable (or live brokers that did not finish a\n"
	    "delete-topic in time), 74 I/O error, 77 authentication failed "
	    "(a certificate,\nSASL credentials or the ZooKeeper identity "
	    "refused) or not authorized (the\nbroker's ACLs, or a ZooKeeper "
	    "node's ACL that wants --zk-auth-file's identity).\n");
}
