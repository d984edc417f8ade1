/* klog-group users; see users.h and klog-group(1). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "cli/cli.h"
#include "group/users.h"
#include "klog/auth/users.h"
#include "klog/zk/zkusers.h"

/* Read, change, write again: how often a ZooKeeper user's node is
 * redone when another writer came between. */
#define ZK_TRIES 8

/* The options by bit, as users_opts_t.have keeps them. */
static const char *const names[] = { "--users", "--mechanism",
    "--iterations", "--password-file" };
#define HAVE(opt) (1u << ((opt) - USERS_OPT_FILE))

void
users_init(users_opts_t *u)
{
	memset(u, 0, sizeof(*u));
	/* Both, where Kafka has no default: a user then logs in with
	 * whichever SCRAM its client is set to. */
	u->mechs = KLOG_USERS_ALL;
	u->iterations = KLOG_SCRAM_ITER_DEFAULT;
}

int
users_option(users_opts_t *u, int ch, const char *arg)
{
	klog_scram_mech_t m;

	switch (ch) {
	case USERS_OPT_FILE:
		if (*arg == '\0')
			cli_misuse("--users: an empty file name");
		u->file = arg;
		break;
	case USERS_OPT_MECHANISM:
		if (strcmp(arg, "all") == 0)
			u->mechs = KLOG_USERS_ALL;
		else if (klog_scram_mech_parse(arg, &m) == 0)
			u->mechs = 1u << m;
		else
			cli_misuse("--mechanism %s: want SCRAM-SHA-256, "
			    "SCRAM-SHA-512 or all", arg);
		break;
	case USERS_OPT_ITERATIONS:
		u->iterations = (int)cli_number("--iterations", arg,
		    KLOG_SCRAM_ITER_MIN, KLOG_SCRAM_ITER_MAX);
		break;
	case USERS_OPT_PASSWORD_FILE:
		u->password_file = arg;
		break;
	case USERS_OPT_PASSWORD:
		cli_misuse("--password: a password is never taken as an "
		    "argument, which ps(1) shows: give it on stdin or in "
		    "--password-file");
	default:
		return 0;
	}
	u->have |= HAVE(ch);
	return 1;
}

const char *
users_given(const users_opts_t *u)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (u->have & 1u << i)
			return names[i];
	return NULL;
}

void
users_usage(FILE *f)
{
	fprintf(f,
	    "  with --users FILE, the SCRAM users a standalone broker "
	    "reads:\n"
	    "  users add NAME [--mechanism M] [--iterations N] "
	    "[--password-file F]\n"
	    "                              add NAME or replace its "
	    "credentials; the password\n"
	    "                              is the first line of stdin (or "
	    "of F)\n"
	    "  users remove NAME [--mechanism M]\n"
	    "                              remove NAME's credentials\n"
	    "  users list [NAME]           users, mechanisms and iterations "
	    "(never keys)\n"
	    "      --users FILE         the users file; with -Z instead, "
	    "the users in\n"
	    "                           ZooKeeper (/config/users, as Kafka; "
	    "needs --zk-auth-file)\n"
	    "      --mechanism M        SCRAM-SHA-256, SCRAM-SHA-512 or all "
	    "(default all)\n"
	    "      --iterations N       users add: PBKDF2 iterations, 4096 to "
	    "16384\n"
	    "                           (default 4096)\n"
	    "      --password-file F    users add: read the password from F, "
	    "not stdin\n"
	    "\n");
}

void
users_check(const users_opts_t *u, char **args, int nargs,
    int brokers_given, int zk_given, int zk_auth)
{
	static const struct {
		const char *name;
		int nargs;      /* with NAME: 2; list: 1 or 2 */
		unsigned allow;
	} actions[] = {
		{ "add", 2, HAVE(USERS_OPT_FILE) | HAVE(USERS_OPT_MECHANISM) |
		    HAVE(USERS_OPT_ITERATIONS) |
		    HAVE(USERS_OPT_PASSWORD_FILE) },
		{ "remove", 2, HAVE(USERS_OPT_FILE) |
		    HAVE(USERS_OPT_MECHANISM) },
		{ "list", 1, HAVE(USERS_OPT_FILE) },
	};
	klog_err_t err;
	size_t i, k;

	if (nargs == 0)
		cli_misuse("users needs add, remove or list");
	for (i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
		if (strcmp(args[0], actions[i].name) == 0)
			break;
	if (i == sizeof(actions) / sizeof(actions[0]))
		cli_misuse("users %s: not add, remove or list", args[0]);
	if (nargs < actions[i].nargs)
		cli_misuse("users %s needs a user name", args[0]);
	if (nargs > 2)
		cli_misuse("%s: unexpected argument", args[2]);
	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if ((u->have & 1u << k) && !(actions[i].allow & 1u << k))
			cli_misuse("users %s does not take %s", args[0],
			    names[k]);
	/* Never echoed: it may hold what a terminal would obey. */
	if (nargs == 2 && klog_users_name_check(args[1], &err) < 0)
		cli_misuse("users %s: not a user name: %s", args[0], err.msg);
	if (brokers_given)
		cli_misuse("users works on --users FILE, not on a broker (-b)");
	if (zk_given && u->file != NULL)
		cli_misuse("users -Z keeps the users in ZooKeeper: --users "
		    "FILE is a standalone broker's");
	/* Without an identity the nodes would be made open to all. */
	if (zk_given && !zk_auth)
		cli_misuse("users -Z needs --zk-auth-file: the credentials "
		    "are made readable by that identity alone");
	if (!zk_given && u->file == NULL)
		cli_misuse("users needs --users FILE or -Z");
	if (!zk_given && zk_auth)
		cli_misuse("users --users FILE does not take --zk-auth-file");
}

/* ---- the password ---- */

/* The first line of f, without its line end, into pw (cap bytes). */
static int
first_line(FILE *f, const char *name, char *pw, size_t cap, size_t *len,
    klog_err_t *err)
{
	char *line = NULL;
	size_t lcap = 0;
	ssize_t n = getline(&line, &lcap, f);
	int rc = 0;

	if (n < 0 && ferror(f))
		rc = klog_err_set(err, -KLOG_EIO, "%s: read: %s", name,
		    strerror(errno));
	if (n > 0 && line[n - 1] == '\n')
		line[--n] = '\0';
	if (n > 0 && line[n - 1] == '\r')
		line[--n] = '\0';
	/* Checked here, said after the copy is wiped: a misuse exits. */
	if (rc == 0 && n > 0 && (size_t)n < cap &&
	    memchr(line, '\0', (size_t)n) == NULL) {
		memcpy(pw, line, (size_t)n);
		*len = (size_t)n;
	}
	if (line != NULL)
		OPENSSL_cleanse(line, lcap);
	free(line);
	if (rc < 0)
		return rc;
	if (n <= 0)
		cli_misuse("users add: no password: the first line of %s is "
		    "empty", name);
	if ((size_t)n >= cap)
		cli_misuse("users add: the password is over %d bytes",
		    KLOG_SCRAM_PASSWORD_MAX);
	if (*len != (size_t)n)
		cli_misuse("users add: the password holds a NUL byte");
	return 0;
}

/*
 * The password, from --password-file or stdin.  Typed at a terminal it
 * is not echoed (what stty -echo does), and a prompt says what is read.
 */
static int
read_password(const users_opts_t *u, const char *user, char *pw, size_t cap,
    size_t *len, klog_err_t *err)
{
	struct termios old, quiet;
	int tty = 0, rc;
	FILE *f;

	*len = 0;
	if (u->password_file != NULL) {
		if ((f = fopen(u->password_file, "re")) == NULL)
			return klog_err_sys(err, NULL, u->password_file);
		rc = first_line(f, u->password_file, pw, cap, len, err);
		fclose(f);
		return rc;
	}
	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &old) == 0) {
		quiet = old;
		quiet.c_lflag &= ~(tcflag_t)ECHO;
		fprintf(stderr, "%s: password for %s: ", cli_prog(), user);
		tty = tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet) == 0;
	}
	rc = first_line(stdin, "stdin", pw, cap, len, err);
	if (tty) {
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
		fputc('\n', stderr);
	}
	return rc;
}

/* ---- the commands ---- */

static void
row(cli_table_t *tab, const char *name, klog_scram_mech_t m, int iter)
{
	cli_col_t c[3];

	c[0] = cli_col_str("USER", "user", name);
	c[1] = cli_col_str("MECHANISM", "mechanism", klog_scram_mech_name(m));
	c[2] = cli_col_num("ITERATIONS", "iterations", iter, 1);
	cli_table_row(tab, c, 3);
}

static void
header(cli_table_t *tab)
{
	cli_col_t c[3];

	c[0] = cli_col_str("USER", "user", NULL);
	c[1] = cli_col_str("MECHANISM", "mechanism", NULL);
	c[2] = cli_col_num("ITERATIONS", "iterations", 0, 0);
	cli_table_header(tab, c, 3);
}

/*
 * Under the lock: the file as it is (none yet is an empty set when
 * missing_ok), changed by fn, saved.  The lock spans the load and the
 * save, so that two adds at once both land.
 */
static int
edit(const char *path, int missing_ok,
    int (*fn)(klog_users_t *, void *, klog_err_t *), void *arg,
    klog_err_t *err)
{
	klog_users_t *set = NULL;
	int fd, rc;

	if ((rc = klog_users_lock(path, &fd, err)) < 0)
		return rc;
	rc = klog_users_load(path, &set, err);
	if (rc == -KLOG_ENOENT && missing_ok)
		rc = klog_users_new(&set, err);
	if (rc == 0 && (rc = fn(set, arg, err)) >= 0)
		rc = klog_users_save(set, path, err);
	klog_users_free(set);
	klog_users_unlock(fd);
	return rc < 0 ? rc : 0;
}

struct add {
	const char *name;
	klog_scram_cred_t creds[KLOG_SCRAM_MECHS];
	int n;
};

static int
add_creds(klog_users_t *set, void *arg, klog_err_t *err)
{
	struct add *a = arg;
	int rc = 0;

	for (int i = 0; rc == 0 && i < a->n; i++)
		rc = klog_users_set(set, a->name, &a->creds[i], err);
	return rc;
}

/*
 * In ZooKeeper: name's node read, changed by fn, written at the version
 * read (created when missing if missing_ok), again when another writer
 * came between.
 */
static int
zk_edit(klog_zk_t *zk, const char *name, int missing_ok,
    int (*fn)(klog_zkuser_t *, void *, klog_err_t *), void *arg,
    klog_err_t *err)
{
	klog_zkuser_t zu;
	int rc = -KLOG_EBUSY;

	for (int tries = 0; tries < ZK_TRIES && (rc == -KLOG_EBUSY ||
	    rc == -KLOG_EEXIST); tries++) {
		rc = klog_zkusers_read(zk, name, &zu, err);
		if (rc == -KLOG_ENOENT && missing_ok)
			rc = 0;
		else if (rc == -KLOG_ENOENT)
			rc = klog_err_set(err, rc, "user \"%s\": no such user",
			    name);
		if (rc == 0 && (rc = fn(&zu, arg, err)) >= 0)
			rc = klog_zkusers_write(zk, name, &zu, err);
		klog_zkuser_clear(&zu);
	}
	return rc < 0 ? rc : 0;
}

static int
zk_add_creds(klog_zkuser_t *zu, void *arg, klog_err_t *err)
{
	struct add *a = arg;
	char text[KLOG_SCRAM_CRED_TEXT_MAX];
	int rc = 0;

	for (int i = 0; rc == 0 && i < a->n; i++) {
		if ((rc = klog_scram_cred_format(&a->creds[i], text,
		    sizeof(text))) == 0)
			rc = klog_zkuser_set(zu, klog_scram_mech_name(
			    a->creds[i].mech), text);
		OPENSSL_cleanse(text, sizeof(text));
	}
	return rc < 0 ? klog_err_set(err, rc, "user \"%s\": %s", a->name,
	    klog_strerror(rc)) : 0;
}

/* The keys are derived before the lock is taken: PBKDF2 is the slow
 * part, and another writer need not wait for it. */
static int
users_add(const users_opts_t *u, klog_zk_t *zk, const char *name,
    cli_table_t *tab, klog_err_t *err)
{
	char pw[KLOG_SCRAM_PASSWORD_MAX + 1];
	struct add a = { .name = name, .n = 0 };
	size_t len;
	int rc;

	if ((rc = read_password(u, name, pw, sizeof(pw), &len, err)) < 0)
		return rc;
	for (int m = 0; rc == 0 && m < KLOG_SCRAM_MECHS; m++)
		if (u->mechs & 1u << m)
			rc = klog_scram_cred_new((klog_scram_mech_t)m, pw, len,
			    u->iterations, &a.creds[a.n++], err);
	OPENSSL_cleanse(pw, sizeof(pw));
	if (rc == 0)
		rc = zk != NULL ? zk_edit(zk, name, 1, zk_add_creds, &a, err) :
		    edit(u->file, 1, add_creds, &a, err);
	if (rc == 0) {
		header(tab);
		for (int i = 0; i < a.n; i++)
			row(tab, name, a.creds[i].mech, a.creds[i].iterations);
	}
	OPENSSL_cleanse(a.creds, sizeof(a.creds));
	return rc;
}

struct remove {
	const char *name;
	unsigned mechs;
	klog_users_entry_t gone[KLOG_SCRAM_MECHS];
	int n;
};

/* What goes is noted first, to be shown once the file is saved. */
static int
remove_creds(klog_users_t *set, void *arg, klog_err_t *err)
{
	struct remove *r = arg;
	klog_users_entry_t e;

	for (size_t i = 0; i < klog_users_count(set); i++) {
		klog_users_get(set, i, &e);
		if (strcmp(e.name, r->name) == 0 && (r->mechs & 1u << e.mech))
			r->gone[r->n++] = (klog_users_entry_t){ r->name,
			    e.mech, e.iterations };
	}
	return klog_users_remove(set, r->name, r->mechs, err);
}

/* The iterations of a credential in Kafka's text, or -1. */
static int
text_iterations(klog_scram_mech_t m, const char *text)
{
	klog_scram_cred_t c;
	int iter = -1;

	if (klog_scram_cred_parse(m, text, &c, NULL) == 0)
		iter = c.iterations;
	OPENSSL_cleanse(&c, sizeof(c));
	return iter;
}

static int
zk_remove_creds(klog_zkuser_t *zu, void *arg, klog_err_t *err)
{
	struct remove *r = arg;
	const char *text, *mech;

	r->n = 0;
	for (int m = 0; m < KLOG_SCRAM_MECHS; m++) {
		mech = klog_scram_mech_name((klog_scram_mech_t)m);
		if (!(r->mechs & 1u << m) ||
		    (text = klog_zkuser_get(zu, mech)) == NULL)
			continue;
		r->gone[r->n++] = (klog_users_entry_t){ r->name,
		    (klog_scram_mech_t)m, text_iterations(
		    (klog_scram_mech_t)m, text) };
		klog_zkuser_remove(zu, mech);
	}
	if (r->n == 0)
		return klog_err_set(err, -KLOG_ENOENT, "user \"%s\": no such "
		    "credential", r->name);
	return 0;
}

static int
users_remove(const users_opts_t *u, klog_zk_t *zk, const char *name,
    cli_table_t *tab, klog_err_t *err)
{
	struct remove r = { .name = name, .mechs = u->mechs, .n = 0 };
	int rc = zk != NULL ? zk_edit(zk, name, 0, zk_remove_creds, &r, err) :
	    edit(u->file, 0, remove_creds, &r, err);

	if (rc == 0) {
		header(tab);
		for (int i = 0; i < r.n; i++)
			row(tab, name, r.gone[i].mech, r.gone[i].iterations);
	}
	return rc;
}

/* A reader needs no lock: a save is a rename. */
static int
users_list(const users_opts_t *u, const char *name, cli_table_t *tab,
    klog_err_t *err)
{
	klog_users_t *set;
	klog_users_entry_t e;
	int rc, shown = 0;

	if ((rc = klog_users_load(u->file, &set, err)) < 0)
		return rc;
	/* The header even over no users, but not before "no such user". */
	if (name == NULL)
		header(tab);
	for (size_t i = 0; i < klog_users_count(set); i++) {
		klog_users_get(set, i, &e);
		if (name != NULL && strcmp(e.name, name) != 0)
			continue;
		if (shown++ == 0 && name != NULL)
			header(tab);
		row(tab, e.name, e.mech, e.iterations);
	}
	klog_users_free(set);
	if (name != NULL && shown == 0)
		return klog_err_set(err, -KLOG_ENOENT, "user \"%s\": no such "
		    "user", name);
	return 0;
}

/* One user's SCRAM credentials in ZooKeeper as rows; other keys (a
 * Kafka quota) are not users' credentials. */
static int
zk_list_one(klog_zk_t *zk, const char *name, int *shown, cli_table_t *tab,
    klog_err_t *err)
{
	klog_zkuser_t zu;
	klog_scram_mech_t m;
	int rc = klog_zkusers_read(zk, name, &zu, err);

	for (int i = 0; rc == 0 && i < zu.n; i++) {
		if (klog_scram_mech_parse(zu.e[i].key, &m) < 0)
			continue;
		if ((*shown)++ == 0)
			header(tab);
		row(tab, name, m, text_iterations(m, zu.e[i].value));
	}
	klog_zkuser_clear(&zu);
	return rc;
}

static int
users_list_zk(klog_zk_t *zk, const char *name, cli_table_t *tab,
    klog_err_t *err)
{
	klog_zk_list_t l = { 0 };
	int rc, shown = 0;

	if (name != NULL) {
		rc = zk_list_one(zk, name, &shown, tab, err);
		if (rc == -KLOG_ENOENT || (rc == 0 && shown == 0))
			rc = klog_err_set(err, -KLOG_ENOENT, "user \"%s\": no "
			    "such user", name);
		return rc;
	}
	if ((rc = klog_zkusers_list(zk, &l, err)) < 0)
		return rc;
	header(tab);
	shown = 1;
	/* One removed meanwhile is no longer there to list. */
	for (size_t i = 0; rc == 0 && i < l.n; i++)
		if ((rc = zk_list_one(zk, l.names[i], &shown, tab, err)) ==
		    -KLOG_ENOENT)
			rc = 0;
	klog_zk_list_free(&l);
	return rc;
}

int
users_run(const users_opts_t *u, klog_zk_t *zk, char **args, int nargs,
    cli_table_t *tab, klog_err_t *err)
{
	if (strcmp(args[0], "add") == 0)
		return users_add(u, zk, args[1], tab, err);
	if (strcmp(args[0], "remove") == 0)
		return users_remove(u, zk, args[1], tab, err);
	if (zk != NULL)
		return users_list_zk(zk, nargs > 1 ? args[1] : NULL, tab, err);
	return users_list(u, nargs > 1 ? args[1] : NULL, tab, err);
}
