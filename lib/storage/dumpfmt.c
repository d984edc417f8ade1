/*
 * klog-dump's output (dump.h): what a problem event says, and a message, an
 * epoch or a file's summary as a text line or an NDJSON record.  Split from
 * the walk (dump.c) so that the walk knows nothing of how it is shown.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "klog/base/json.h"
#include "klog/storage/dump.h"

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
		putf(b, "crc mismatch%s (stored 0x%08" PRIx32 ", computed 0x%08"
		    PRIx32 ")", m->depth ? " in a message inside the wrapper" :
		    "", m->crc_stored, m->crc_computed);
		break;
	case KLOG_DUMP_CORRUPT:
		if (m != NULL)
			putf(b, "gzip wrapper: %s", ev->what);
		else if (ev->need >= 0)
			putf(b, "%s (length field 0x%08" PRIx64 ")", ev->what,
			    (uint64_t)(ev->need - KLOG_LENGTH_SIZE));
		else
			putf(b, "%s", ev->what);
		break;
	case KLOG_DUMP_UNCHECKED:
		putf(b, "%s; its messages are not checked", ev->what);
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

/* The payload's first n bytes between quotes, C-style escapes, ASCII. */
static void
put_preview(klog_buf_t *b, const uint8_t *p, size_t len, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t show = len < n ? len : n;
	char e[4] = { '\\', 'x', 0, 0 };

	klog_buf_put(b, "payload=\"", 9);
	for (size_t i = 0; i < show; i++) {
		uint8_t c = p[i];

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
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
	klog_buf_put(b, "\"", 1);
	if (show < len)
		klog_buf_put(b, "...", 3);
}

void
klog_dump_render_text(klog_buf_t *b, const klog_dump_event_t *ev,
    size_t preview)
{
	const klog_msg_t *m = ev->msg;

	putf(b, "%soffset=%" PRId64 " pos=%" PRId64 " size=%" PRIu32
	    " magic=%u codec=%s crc=0x%08" PRIx32 " computed=0x%08" PRIx32
	    " status=%s", m->depth ? "  " : "", m->offset,
	    m->offset - ev->base, m->payload_len, m->magic,
	    klog_codec_name(m->codec), m->crc_stored, m->crc_computed,
	    m->valid ? "ok" : "crc-mismatch");
	if (preview > 0) {
		klog_buf_put(b, " ", 1);
		put_preview(b, m->payload, m->payload_len, preview);
	}
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

void
klog_dump_render_json(klog_buf_t *b, const klog_dump_event_t *ev)
{
	const klog_msg_t *m = ev->msg;

	klog_buf_put(b, "{\"file\":", 8);
	put_json_path(b, ev->file);
	putf(b, ",\"offset\":%" PRId64 ",\"next_offset\":%" PRId64
	    ",\"pos\":%" PRId64 ",\"length\":%" PRIu32 ",\"size\":%" PRIu32
	    ",\"magic\":%u,\"attributes\":%u,\"codec\":\"%s\",\"depth\":%u"
	    ",\"crc\":%" PRIu32 ",\"crc_computed\":%" PRIu32 ",\"valid\":%s",
	    m->offset, m->next_offset, m->offset - ev->base, m->length,
	    m->payload_len, m->magic, m->attributes, klog_codec_name(m->codec),
	    m->depth, m->crc_stored, m->crc_computed,
	    m->valid ? "true" : "false");
	if (klog_utf8_valid(m->payload, m->payload_len)) {
		klog_buf_put(b, ",\"payload\":", 11);
		klog_json_put_string(b, m->payload, m->payload_len);
	} else {
		klog_buf_put(b, ",\"payload_base64\":\"", 19);
		klog_base64_put(b, m->payload, m->payload_len);
		klog_buf_put(b, "\"", 1);
	}
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
	    ",\"messages\":%" PRIu64 ",\"payload_bytes\":%" PRIu64
	    ",\"overhead_bytes\":%" PRIu64 ",\"overhead_per_message\":%.2f" :
	    " base=%" PRId64 " first=%" PRId64 " next=%" PRId64
	    " entries=%" PRIu64 " messages=%" PRIu64 " payload_bytes=%" PRIu64
	    " overhead_bytes=%" PRIu64 " overhead_per_msg=%.2f",
	    ev->base, s->first_offset, s->next_offset, s->entries, s->messages,
	    s->payload_bytes, overhead, per);
	putf(b, json ? ",\"codecs\":{\"none\":%" PRIu64 ",\"gzip\":%" PRIu64
	    ",\"snappy\":%" PRIu64 "}" :
	    " codecs=none:%" PRIu64 ",gzip:%" PRIu64 ",snappy:%" PRIu64,
	    s->codecs[KLOG_CODEC_NONE], s->codecs[KLOG_CODEC_GZIP],
	    s->codecs[KLOG_CODEC_SNAPPY]);
	putf(b, json ? ",\"crc_errors\":%" PRIu64 ",\"corrupt\":%" PRIu64
	    ",\"unchecked\":%" PRIu64 ",\"partial_bytes\":%" PRId64
	    ",\"status\":\"%s\"}\n" :
	    " crc_errors=%" PRIu64 " corrupt=%" PRIu64 " unchecked=%" PRIu64
	    " partial_bytes=%" PRId64 " status=%s\n",
	    s->crc_errors, s->corrupt, s->unchecked, s->partial_bytes,
	    summary_status(s));
}
