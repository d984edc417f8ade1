#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "klog/base/error.h"
#include "klog/base/parse.h"

static int
fail(const char **why, const char *reason)
{
	if (why != NULL)
		*why = reason;
	return -KLOG_EINVAL;
}

/* Parse a leading decimal integer; *end points past it. */
static int
leading_i64(const char *s, int64_t *out, const char **end, const char **why)
{
	char *e;
	long long v;

	if (s == NULL || *s == '\0' || isspace((unsigned char)*s))
		return fail(why, "invalid");
	errno = 0;
	v = strtoll(s, &e, 10);
	if (e == s)
		return fail(why, "invalid");
	if (errno == ERANGE)
		return fail(why, v < 0 ? "too small" : "too large");
	*out = v;
	*end = e;
	return 0;
}

static int
check_range(int64_t v, int64_t min, int64_t max, int64_t *out, const char **why)
{
	if (v < min)
		return fail(why, "too small");
	if (v > max)
		return fail(why, "too large");
	*out = v;
	return 0;
}

int
klog_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out,
    const char **why)
{
	int64_t v;
	const char *end;
	int rc;

	if ((rc = leading_i64(s, &v, &end, why)) < 0)
		return rc;
	if (*end != '\0')
		return fail(why, "invalid");
	return check_range(v, min, max, out, why);
}

/* v * mult, or an error if it overflows. */
static int
scale(int64_t v, int64_t mult, int64_t *out, const char **why)
{
	if (v > 0 && v > INT64_MAX / mult)
		return fail(why, "too large");
	if (v < 0 && v < INT64_MIN / mult)
		return fail(why, "too small");
	*out = v * mult;
	return 0;
}

int
klog_parse_size(const char *s, int64_t min, int64_t max, int64_t *out,
    const char **why)
{
	static const char units[] = "KMGT";
	const char *end, *u;
	int64_t v, mult = 1;
	int rc;

	if ((rc = leading_i64(s, &v, &end, why)) < 0)
		return rc;
	if (*end != '\0' && strcasecmp(end, "b") != 0) {
		u = strchr(units, toupper((unsigned char)*end));
		if (u == NULL)
			return fail(why, "invalid");
		for (const char *p = units; p <= u; p++)
			mult *= 1024;
		end++;
		if (strcasecmp(end, "ib") == 0 || strcasecmp(end, "b") == 0)
			end += strlen(end);
		if (*end != '\0')
			return fail(why, "invalid");
	}
	if ((rc = scale(v, mult, &v, why)) < 0)
		return rc;
	return check_range(v, min, max, out, why);
}

int
klog_parse_duration_ms(const char *s, int64_t default_unit_ms, int64_t min,
    int64_t max, int64_t *out, const char **why)
{
	static const struct {
		const char *name;
		int64_t ms;
	} units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 },
		{ "d", 86400000 },
	};
	const char *end;
	int64_t v, mult = default_unit_ms;
	int rc;

	if ((rc = leading_i64(s, &v, &end, why)) < 0)
		return rc;
	if (*end != '\0') {
		mult = 0;
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (strcmp(end, units[i].name) == 0)
				mult = units[i].ms;
		if (mult == 0)
			return fail(why, "invalid");
	}
	if ((rc = scale(v, mult, &v, why)) < 0)
		return rc;
	return check_range(v, min, max, out, why);
}

static int
copy_part(const char *s, size_t n, char *dst, size_t dstlen, const char **why)
{
	if (n >= dstlen)
		return fail(why, "too long");
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 0;
}

int
klog_parse_hostport(const char *s, const char *default_host,
    const char *default_port, char *host, size_t hostlen, char *port,
    size_t portlen, const char **why)
{
	const char *hs = s, *he, *colon;
	int64_t p;
	int rc;

	if (s == NULL || *s == '\0')
		return fail(why, "invalid");
	if (*s == '[') {
		hs = s + 1;
		he = strchr(hs, ']');
		if (he == NULL || (he[1] != '\0' && he[1] != ':'))
			return fail(why, "invalid");
		colon = he[1] == ':' ? he + 1 : NULL;
	} else {
		colon = strrchr(s, ':');
		if (colon != NULL && strchr(s, ':') != colon)
			return fail(why, "invalid"); /* bare IPv6 needs [] */
		he = colon != NULL ? colon : s + strlen(s);
	}
	if (he == hs)
		rc = copy_part(default_host, strlen(default_host), host, hostlen, why);
	else
		rc = copy_part(hs, (size_t)(he - hs), host, hostlen, why);
	if (rc < 0)
		return rc;
	if (colon == NULL)
		return copy_part(default_port, strlen(default_port), port,
		    portlen, why);
	if ((rc = klog_parse_i64(colon + 1, 1, 65535, &p, why)) < 0)
		return rc;
	return copy_part(colon + 1, strlen(colon + 1), port, portlen, why);
}

int
klog_parse_bool(const char *s, int *out, const char **why)
{
	static const char *const yes[] = { "1", "true", "yes", "on" };
	static const char *const no[] = { "0", "false", "no", "off" };

	for (size_t i = 0; i < 4; i++) {
		if (s != NULL && strcasecmp(s, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (s != NULL && strcasecmp(s, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	return fail(why, "invalid");
}

int
klog_parse_time_ms(const char *s, int64_t *out, const char **why)
{
	struct tm tm;
	const char *end;

	if (klog_parse_i64(s, 0, INT64_MAX, out, why) == 0)
		return 0;
	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (end == NULL || (strcmp(end, "Z") != 0 && *end != '\0')) {
		*why = "want ms since the epoch or YYYY-MM-DDTHH:MM:SSZ";
		return -KLOG_EINVAL;
	}
	*out = (int64_t)timegm(&tm) * 1000;
	if (*out < 0) {
		*why = "before 1970";
		return -KLOG_EINVAL;
	}
	return 0;
}
