/*
 * klog-dump's output (dump.h): what a problem event says, and a message, an
 * epoch or a file's summary as a text line or an NDJSON record.  Split from
 * the walk (dump.c) so that the walk knows nothing of how it is shown.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "klog/base/json.h"
#include "klog/storage/dump.h"
#include "klog/storage/record.h"

int
klog_dump_is_problem(const klog_dump_event_t *ev, int allow_partial)
{
	switch (ev->kind) {
	case KLOG_DUMP_MESSAGE:
		return !ev->msg->valid;
	case KLOG_DUMP_CORRUPT:
	case KLOG_DUMP_GAP:
		return 1;
	case KLOG_DUMP_PARTIAL:
		return !(allow_partial && ev->last);
	default:
		return 0;
	}
}

static void
putf(klog_buf_t *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* printf into b; what klog-dump formats is a line of fixed fields, well
 * under the local buffer. */
static void
putf(klog_buf_t *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	klog_buf_put(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n :
	    sizeof(tmp) - 1);
}

void
klog_dump_describe(klog_buf_t *b, const klog_dump_event_t *ev)
{
	const klog_msg_t *m = ev->msg;
	int64_t prev_end = ev->size;

	if (ev->kind == KLOG_DUMP_GAP) {
		if (ev->offset > prev_end)
			putf(b, "offset %" PRId64 ": gap of %" PRId64 " bytes "
			    "after the previous segment, which ends at %"
			    PRId64, ev->offset, ev->offset - prev_end,
			    prev_end);
		else
			putf(b, "offset %" PRId64 ": overlaps the previous "
			    "segment, which ends at %" PRId64, ev->offset,
			    prev_end);
		return;
	}
	if (ev->offset < 0) {   /* about the directory, not an entry */
		putf(b, "%s", ev->what);
		return;
	}
	putf(b, "offset %" PRId64 " (byte 0x%" PRIx64 "): ", ev->offset,
	    (uint64_t)(ev->offset - ev->base));
	switch (ev->kind) {
	case KLOG_DUMP_MESSAGE:
		putf(b, "%s mismatch%s (stored 0x%08" PRIx32 ", computed 0x%08"
		    PRIx32 ")", m->magic == KLOG_MAGIC2 ? "crc32c" : "crc",
		    m->depth ? " in a message inside the wrapper" : "",
		    m->crc_stored, m->crc_computed);
		break;
	case KLOG_DUMP_CORRUPT:
		if (m != NULL)
			putf(b, "%s: %s", m->magic == KLOG_MAGIC2 ?
			    "magic-2 entry" : "gzip wrapper", ev->what);
		else if (ev->need >= 0)
			putf(b, "%s (length field 0x%08" PRIx64 ")", ev->what,
			    (uint64_t)(ev->need - KLOG_LENGTH_SIZE));
		else
			putf(b, "%s", ev->what);
		break;
	case KLOG_DUMP_UNCHECKED:
		putf(b, "%s; its %s are not checked", ev->what,
		    m != NULL && m->magic == KLOG_MAGIC2 ? "records" :
		    "messages");
		break;
	case KLOG_DUMP_PARTIAL:
		if (ev->need >= 0)
			putf(b, "partial entry at the end of the file (%"
			    PRId64 " of %" PRId64 " bytes)", ev->size,
			    ev->need);
		else
			putf(b, "partial entry at the end of the file (%"
			    PRId64 " bytes, length cut)", ev->size);
		break;
	default:
		putf(b, "no problem");
		break;
	}
}

/*
 * p[0..len)'s first n bytes, C-style escapes, ASCII; in a header's name
 * or value (sep) also '=' and ',', which separate them.
 */
static void
put_escaped(klog_buf_t *b, const uint8_t *p, size_t len, size_t n, int sep)
{
	static const char hex[] = "0123456789abcdef";
	size_t show = len < n ? len : n;
	char e[4] = { '\\', 'x', 0, 0 };

	for (size_t i = 0; i < show; i++) {
		uint8_t c = p[i];

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\' &&
		    !(sep && (c == '=' || c == ','))) {
			klog_buf_put(b, &c, 1);
			continue;
		}
		switch (c) {
		case '"': klog_buf_put(b, "\\\"", 2); break;
		case '\\': klog_buf_put(b, "\\\\", 2); break;
		case '\n': klog_buf_put(b, "\\n", 2); break;
		case '\r': klog_buf_put(b, "\\r", 2); break;
		case '\t': klog_buf_put(b, "\\t", 2); break;
		default:
			e[2] = hex[c >> 4];
			e[3] = hex[c & 0xf];
			klog_buf_put(b, e, 4);
			break;
		}
	}
}

/* name="first n bytes"..., "..." after the quote if there is more. */
static void
put_preview(klog_buf_t *b, const char *name, const uint8_t *p, size_t len,
    size_t n)
{
	putf(b, " %s=\"", name);
	put_escaped(b, p, len, n, 0);
	klog_buf_put(b, "\"", 1);
	if (n < len)
		klog_buf_put(b, "...", 3);
}

/* A record's headers: name=value,... (a null value: the name alone). */
static void
put_headers(klog_buf_t *b, const klog_msg_t *m)
{
	klog_header_t h;
	size_t pos = 0;

	klog_buf_put(b, " headers=\"", 10);
	for (uint32_t i = 0; klog_record_header_next(m->headers,
	    m->headers_len, &pos, &h) == 1; i++) {
		if (i > 0)
			klog_buf_put(b, ",", 1);
		put_escaped(b, h.key, h.key_len, h.key_len, 1);
		if (h.value == NULL)
			continue;
		klog_buf_put(b, "=", 1);
		put_escaped(b, h.value, (size_t)h.value_len,
		    (size_t)h.value_len, 1);
	}
	klog_buf_put(b, "\"", 1);
}

/* A timestamp in ms as ISO 8601 UTC with milliseconds. */
static void
put_iso(klog_buf_t *b, int64_t ms)
{
	time_t secs = (time_t)(ms / 1000);
	char text[64];
	struct tm tm;

	if (gmtime_r(&secs, &tm) == NULL ||
	    strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		return;
	putf(b, " time=%s.%03dZ", text, (int)(ms % 1000));
}

static const char *
timestamp_type(const klog_batch_t *h)
{
	return h->attributes & KLOG_BATCH_LOG_APPEND_TIME ? "LogAppendTime" :
	    "CreateTime";
}

/*
 * A magic-2 entry's header fields, as text (" records=3 ...") or JSON
 * members (",\"records\":3..."); the producer's only when it has an id.
 */
static void
put_batch(klog_buf_t *b, const klog_msg_t *m, int json)
{
	klog_batch_t h;

	if (klog_batch_read(m->payload, m->payload_len, &h) < 0)
		return;
	putf(b, json ? ",\"records\":%" PRId32 ",\"timestamp_type\":\"%s\""
	    ",\"first_timestamp\":%" PRId64 ",\"max_timestamp\":%" PRId64 :
	    " records=%" PRId32 " timestamp_type=%s first_timestamp=%" PRId64
	    " max_timestamp=%" PRId64, h.count, timestamp_type(&h),
	    h.first_timestamp, h.max_timestamp);
	if (h.producer_id < 0)
		return;
	putf(b, json ? ",\"producer_id\":%" PRId64 ",\"producer_epoch\":%d"
	    ",\"base_sequence\":%" PRId32 : " producer_id=%" PRId64
	    " producer_epoch=%d base_sequence=%" PRId32, h.producer_id,
	    (int)h.producer_epoch, h.base_sequence);
}

/* Whether m is a record of a magic-2 entry (not the entry itself). */
static int
is_record(const klog_msg_t *m)
{
	return m->magic == KLOG_MAGIC2 && m->depth > 0;
}

/*
 * A record's line: its Kafka offset beside klog's, its timestamp, key,
 * headers and value; records have no CRC of their own (the entry's
 * covers them).
 */
static void
render_record(klog_buf_t *b, const klog_dump_event_t *ev, size_t preview)
{
	const klog_msg_t *m = ev->msg;

	putf(b, "  offset=%" PRId64 " kafka_offset=%" PRId64 " pos=%" PRId64
	    " size=%" PRIu32 " magic=%u timestamp=%" PRId64, m->offset,
	    m->offset + m->delta, m->offset - ev->base, m->payload_len,
	    m->magic, m->timestamp);
	if (m->timestamp >= 0)
		put_iso(b, m->timestamp);
	if (preview > 0 && m->key != NULL)
		put_preview(b, "key", m->key, (size_t)m->key_len, preview);
	if (preview > 0 && m->header_count > 0)
		put_headers(b, m);
	if (preview > 0 && m->payload == NULL)
		klog_buf_put(b, " payload=null", 13);
	else if (preview > 0)
		put_preview(b, "payload", m->payload, m->payload_len, preview);
	klog_buf_put(b, "\n", 1);
}

void
klog_dump_render_text(klog_buf_t *b, const klog_dump_event_t *ev,
    size_t preview)
{
	const klog_msg_t *m = ev->msg;
	int m2 = m->magic == KLOG_MAGIC2;

	if (is_record(m)) {
		render_record(b, ev, preview);
		return;
	}
	putf(b, "%soffset=%" PRId64 " pos=%" PRId64 " size=%" PRIu32
	    " magic=%u codec=%s %s=0x%08" PRIx32 " computed=0x%08" PRIx32
	    " status=%s", m->depth ? "  " : "", m->offset,
	    m->offset - ev->base, m->payload_len, m->magic,
	    klog_codec_name(m->codec), m2 ? "crc32c" : "crc", m->crc_stored,
	    m->crc_computed, m->valid ? "ok" : "crc-mismatch");
	/* A magic-2 entry's payload is the batch's body: its fields are
	 * shown, its records' values with --deep. */
	if (m2)
		put_batch(b, m, 0);
	else if (preview > 0)
		put_preview(b, "payload", m->payload, m->payload_len, preview);
	klog_buf_put(b, "\n", 1);
}

/* A path as a JSON string; bytes that are not UTF-8 become U+FFFD, since
 * a file name need not be text but the record must be. */
static void
put_json_path(klog_buf_t *b, const char *path)
{
	size_t n = strlen(path);
	klog_buf_t tmp;

	if (klog_utf8_valid(path, n)) {
		klog_json_put_string(b, path, n);
		return;
	}
	klog_buf_init(&tmp);
	for (size_t i = 0; i < n;) {
		size_t len = 1;

		while (len <= 4 && i + len <= n &&
		    !klog_utf8_valid(path + i, len))
			len++;
		if (len <= 4 && i + len <= n) {
			klog_buf_put(&tmp, path + i, len);
			i += len;
		} else {
			klog_buf_put(&tmp, "\xef\xbf\xbd", 3);
			i++;
		}
	}
	if (tmp.failed)
		b->failed = 1;
	else
		klog_json_put_string(b, tmp.data, tmp.len);
	klog_buf_free(&tmp);
}

void
klog_dump_render_epoch(klog_buf_t *b, const klog_dump_event_t *ev, int json)
{
	if (json)
		putf(b, "{\"epoch\":%d,\"start\":%" PRId64 "}\n",
		    (int)ev->epoch, ev->offset);
	else
		putf(b, "epoch=%d start=%" PRId64 "\n", (int)ev->epoch,
		    ev->offset);
}

/* "name":"text", "name_base64":"...", or "name":null for NULL. */
static void
put_json_bytes(klog_buf_t *b, const char *name, const uint8_t *p, size_t n)
{
	if (p == NULL) {
		putf(b, "\"%s\":null", name);
	} else if (klog_utf8_valid(p, n)) {
		putf(b, "\"%s\":", name);
		klog_json_put_string(b, p, n);
	} else {
		putf(b, "\"%s_base64\":\"", name);
		klog_base64_put(b, p, n);
		klog_buf_put(b, "\"", 1);
	}
}

/*
 * A record's members as klog-consume -J writes them, so that klog-produce
 * -J reads them back: key (absent when null), timestamp (when set),
 * headers [{"key":..,"value":..}].
 */
static void
put_json_record(klog_buf_t *b, const klog_msg_t *m)
{
	klog_header_t h;
	size_t pos = 0;

	putf(b, ",\"kafka_offset\":%" PRId64, m->offset + m->delta);
	if (m->key != NULL) {
		klog_buf_put(b, ",", 1);
		put_json_bytes(b, "key", m->key, (size_t)m->key_len);
	}
	if (m->timestamp != KLOG_NO_TIMESTAMP)
		putf(b, ",\"timestamp\":%" PRId64, m->timestamp);
	if (m->header_count == 0)
		return;
	klog_buf_put(b, ",\"headers\":[", 12);
	for (uint32_t i = 0; klog_record_header_next(m->headers,
	    m->headers_len, &pos, &h) == 1; i++) {
		klog_buf_put(b, i > 0 ? ",{" : "{", i > 0 ? 2 : 1);
		put_json_bytes(b, "key", h.key, h.key_len);
		klog_buf_put(b, ",", 1);
		put_json_bytes(b, "value", h.value, h.value == NULL ? 0 :
		    (size_t)h.value_len);
		klog_buf_put(b, "}", 1);
	}
	klog_buf_put(b, "]", 1);
}

void
klog_dump_render_json(klog_buf_t *b, const klog_dump_event_t *ev)
{
	const klog_msg_t *m = ev->msg;

	klog_buf_put(b, "{\"file\":", 8);
	put_json_path(b, ev->file);
	putf(b, ",\"offset\":%" PRId64 ",\"next_offset\":%" PRId64
	    ",\"pos\":%" PRId64 ",\"length\":%" PRIu32 ",\"size\":%" PRIu32
	    ",\"magic\":%u,\"attributes\":%u,\"codec\":\"%s\",\"depth\":%u",
	    m->offset, m->next_offset, m->offset - ev->base, m->length,
	    m->payload_len, m->magic, m->attributes, klog_codec_name(m->codec),
	    m->depth);
	/* A record has no CRC of its own: its entry's covers it. */
	if (!is_record(m))
		putf(b, ",\"crc\":%" PRIu32 ",\"crc_computed\":%" PRIu32,
		    m->crc_stored, m->crc_computed);
	putf(b, ",\"valid\":%s", m->valid ? "true" : "false");
	if (is_record(m))
		put_json_record(b, m);
	else if (m->magic == KLOG_MAGIC2)
		put_batch(b, m, 1);
	klog_buf_put(b, ",", 1);
	put_json_bytes(b, "payload", m->payload, m->payload_len);
	klog_buf_put(b, "}\n", 2);
}

static const char *
summary_status(const klog_dump_summary_t *s)
{
	if (s->corrupt > 0)
		return "corrupt";
	if (s->crc_errors > 0)
		return "crc-mismatch";
	if (s->partial_bytes > 0)
		return "partial";
	return "ok";
}

void
klog_dump_render_summary(klog_buf_t *b, const klog_dump_event_t *ev,
    int json)
{
	const klog_dump_summary_t *s = ev->summary;
	uint64_t overhead = s->entry_bytes - s->payload_bytes;
	double per = s->entries ? (double)overhead / (double)s->entries : 0;

	if (json) {
		klog_buf_put(b, "{\"file\":", 8);
		put_json_path(b, ev->file);
	} else {
		klog_buf_put(b, ev->file, strlen(ev->file));
		klog_buf_put(b, ":", 1);
	}
	putf(b, json ? ",\"base\":%" PRId64 ",\"first_offset\":%" PRId64
	    ",\"next_offset\":%" PRId64 ",\"entries\":%" PRIu64
	    ",\"messages\":%" PRIu64 ",\"batches\":%" PRIu64
	    ",\"records\":%" PRIu64 ",\"payload_bytes\":%" PRIu64
	    ",\"overhead_bytes\":%" PRIu64 ",\"overhead_per_message\":%.2f" :
	    " base=%" PRId64 " first=%" PRId64 " next=%" PRId64
	    " entries=%" PRIu64 " messages=%" PRIu64 " batches=%" PRIu64
	    " records=%" PRIu64 " payload_bytes=%" PRIu64
	    " overhead_bytes=%" PRIu64 " overhead_per_msg=%.2f",
	    ev->base, s->first_offset, s->next_offset, s->entries, s->messages,
	    s->batches, s->records, s->payload_bytes, overhead, per);
	klog_buf_put(b, json ? ",\"codecs\":{" : " codecs=", json ? 11 : 8);
	for (int c = 0; c <= KLOG_CODEC_MAX; c++)
		putf(b, json ? "%s\"%s\":%" PRIu64 : "%s%s:%" PRIu64,
		    c > 0 ? "," : "", klog_codec_name(c), s->codecs[c]);
	if (json)
		klog_buf_put(b, "}", 1);
	putf(b, json ? ",\"crc_errors\":%" PRIu64 ",\"corrupt\":%" PRIu64
	    ",\"unchecked\":%" PRIu64 ",\"partial_bytes\":%" PRId64
	    ",\"status\":\"%s\"}\n" :
	    " crc_errors=%" PRIu64 " corrupt=%" PRIu64 " unchecked=%" PRIu64
	    " partial_bytes=%" PRId64 " status=%s\n",
	    s->crc_errors, s->corrupt, s->unchecked, s->partial_bytes,
	    summary_status(s));
}
