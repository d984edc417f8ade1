/* klog-produce's -h text, in sections printed in order; see usage.h. */
#include <stdio.h>

#include "cli/cli.h"
#include "produce/usage.h"

#define PROG "klog-produce"

static const char *const usage_text[] = {
	/* synopsis; where the brokers are */
	"usage: " PROG " [-0hJqv] [-a acks] [-b brokers | -Z connect] "
	"[-D delim] [-K delim]\n"
	"                    [-X key=value] [-F file] [-m timeout]\n"
	"                    [-p partition] [-z codec] [--batch N] "
	"[--linger ms]\n"
	"                    [--max-message size] [--retry-for time] "
	"[--stop-on-oversize] [--progress]\n"
	"                    [--report file] [-H name=value]... "
	"[--timestamp]\n"
	"                    [--strip-key] [--source-offset-file file] "
	"[--idempotent]\n"
	"                    -t topic\n"
	"Read records from stdin, one per line, and publish them to a "
	"topic.\n"
	"\n"
	"  -b, --broker LIST      brokers, HOST:PORT[,...] (default: "
	"$KLOG_BROKERS or\n"
	"                         " CLI_DEFAULT_BROKERS ")\n"
	"  -Z, --zookeeper CONNECT  cluster mode: find the brokers in "
	"ZooKeeper at\n"
	"                         host:port[,...][/chroot] (default: "
	"$KLOG_ZOOKEEPER\n"
	"                         unless -b is given)\n"
	"      --zk-session-timeout TIME  requested ZooKeeper session "
	"timeout (default\n"
	"                         6000ms)\n",
	CLI_WHERE_USAGE,
	/* what is read and what of it is sent */
	"  -t, --topic TOPIC      the topic (created on first use)\n"
	"  -p, --partition N      only this partition (default: batches "
	"spread round robin)\n"
	"  -K, --key-delimiter D  the text before D is the record's key: "
	"stored, and\n"
	"                         same key, same partition\n"
	"      --strip-key        publish only the text after the key "
	"delimiter\n"
	"  -H, --header NAME=VALUE  add this header to every record "
	"(repeatable;\n"
	"                         NAME alone: a null value)\n"
	"      --timestamp        stamp each record with the time it was "
	"read\n"
	"                         (CreateTime, ms)\n"
	"  -D, --delimiter D      record delimiter (default \\n; escapes "
	"\\n \\t \\0 \\xNN)\n"
	"  -0, --null             records end with NUL bytes (-D '\\0')\n"
	"  -J, --json             read the NDJSON envelope of "
	"klog-consume -J\n"
	"      --source-offset-file F  with -J: after each acknowledged "
	"batch, save the\n"
	"                         envelopes' source positions in F (a "
	"mirror's bookmark)\n",
	/* how it is sent; chatter; the exit status */
	"  -z, --compression C    gzip, snappy, lz4, zstd or none "
	"(default none)\n"
	"  -a, --acks A           0 (none), 1 (appended) or all (synced); "
	"default 1\n"
	"      --batch N          records per request (default 1000)\n"
	"      --idempotent       a producer id and sequences: retries "
	"after a lost\n"
	"                         acknowledgement write nothing twice\n"
	"      --linger TIME      longest wait for a batch to fill "
	"(default 5ms)\n"
	"      --max-message SIZE largest record (default 1000000); a "
	"longer one is\n"
	"                         skipped with a warning, and the exit "
	"status is 1\n"
	"      --stop-on-oversize stop at the first record over "
	"--max-message instead\n"
	"      --progress         of a file on stdin, on stderr even when "
	"it is not a\n"
	"                         terminal\n"
	"      --report FILE      a JSON line per record into FILE (- for "
	"stdout):\n"
	"                         its number, partition and offset, or "
	"its error\n"
	"      --retry-for TIME   give up reconnecting, or retrying a "
	"partition with no\n"
	"                         leader or too few replicas, after TIME "
	"(default 30s)\n"
	"  -m, --timeout TIME     connect and metadata timeout (default "
	"5s)\n"
	"  -q, --quiet            no messages but errors\n"
	"  -v, --verbose          statistics on stderr at the end\n"
	"  -h, --help             print this help\n"
	"      --version          print the version\n"
	"\n"
	"Exit status: 0 every record acknowledged, 1 failure, 64 usage, "
	"65 bad -J input,\n69 broker or ZooKeeper unavailable, 74 I/O "
	"error, 77 authentication failed\n(certificate, SASL or "
	"ZooKeeper identity refused) or not authorized.\n",
};

void
produce_usage(FILE *f)
{
	for (size_t i = 0; i < sizeof(usage_text) / sizeof(usage_text[0]); i++)
		fputs(usage_text[i], f);
}
