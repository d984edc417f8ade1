/*
 * The message format: Kafka 0.7's, byte for byte, big-endian.  What is stored
 * in a segment file is exactly what goes on the wire, so the broker can hand a
 * file range to sendfile(2) without looking inside.
 *
 * A message set is a plain concatenation of entries, with no header and no
 * count.  An entry is a 4-byte length followed by that many bytes of message:
 *
 *   magic 0 (the paper's format, written by klog for plain messages):
 *   +-----------+---------+-----------+-----------------+
 *   | length:4  | magic:1 | crc32:4   | payload         |   length = 5 + n
 *   +-----------+---------+-----------+-----------------+
 *      9 bytes of overhead per message
 *
 *   magic 1 (Kafka 0.7; klog writes it only for compressed wrappers):
 *   +-----------+---------+---------+-----------+---------------+
 *   | length:4  | magic:1 | attrs:1 | crc32:4   | payload       |   length = 6 + n
 *   +-----------+---------+---------+-----------+---------------+
 *      attrs & 0x03 = codec: 0 none, 1 gzip, 2 snappy (3 is invalid)
 *
 *   magic 2 (record.h): a Kafka RecordBatch v2's body, its records with
 *   keys, timestamps and headers, and a producer id, epoch and sequence:
 *   +-----------+---------+---------+-----------+---------------+
 *   | length:4  | magic:1 | attrs:1 | crc32c:4  | body          |   length = 6 + n
 *   +-----------+---------+---------+-----------+---------------+
 *      n >= 40 (the body's header); attrs = the body's attributes' low
 *      byte; attributes & 7 = codec of the records: 0-4 (codec.h)
 *
 * crc32 is the CRC-32 of zlib and gzip (klog_crc32()) of the payload bytes
 * only (magic 2: CRC-32C of the body, klog_crc32c()).  A gzip wrapper is a
 * magic-1 message whose payload is an RFC 1952 gzip stream of an inner
 * message set.
 *
 * Offsets: a message's offset is the byte position of its entry in the
 * partition; the next offset is offset + 4 + length.  Every message inside a
 * wrapper carries the wrapper's offset, and only the last one's next offset
 * moves past the wrapper, so a reader always resumes at a wrapper boundary
 * (at-least-once: a reader stopping inside a wrapper sees part of it again).
 * The records of a magic-2 entry are read the same way: all at the entry's
 * offset W, the last one's next offset past the entry; record i's Kafka
 * offset is W + its offset delta, i (record.h).
 */
#ifndef KLOG_FORMAT_H
#define KLOG_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "klog/storage/batchiter.h"
#include "klog/storage/codec.h"

#define KLOG_LENGTH_SIZE 4        /* the length prefix of an entry */
#define KLOG_MAGIC0_HEADER 5      /* magic + crc */
#define KLOG_MAGIC1_HEADER 6      /* magic + attributes + crc */
#define KLOG_MSG_OVERHEAD (KLOG_LENGTH_SIZE + KLOG_MAGIC0_HEADER)
#define KLOG_CODEC_MASK 0x03       /* magic 1's codec bits (magic 2's:
                                      KLOG_BATCH_CODEC_MASK) */

/* The largest length field klog accepts: anything bigger is corruption. */
#define KLOG_MAX_ENTRY_LENGTH (1u << 30)

/* Big-endian helpers, used by the protocol code too. */
static inline uint32_t
klog_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

static inline void
klog_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Bytes one magic-0 entry with an n-byte payload takes: n + 9. */
static inline size_t
klog_entry_size(size_t payload_len)
{
	return payload_len + KLOG_MSG_OVERHEAD;
}

/*
 * The CRC-32 of the format (zlib's and gzip's, reflected 0xEDB88320) over
 * p[0..len), continuing from crc (0 to start).  libdeflate's, which folds
 * with carry-less multiplication where the CPU has it: several times
 * zlib's crc32() on the 200-byte payloads klog carries.
 */
uint32_t klog_crc32(uint32_t crc, const void *p, size_t len);

/*
 * The CRC the entries of magic use over p[0..len), continuing from crc (0
 * to start): klog_crc32() for magic 0 and 1, klog_crc32c() (record.h) for
 * magic 2.  What a reader that checks entries without the iterator
 * (recovery, the CRC pool) computes.
 */
uint32_t klog_entry_crc(uint8_t magic, uint32_t crc, const void *p,
    size_t len);

/*
 * Write one magic-0 entry for payload into buf, which must hold
 * klog_entry_size(len) bytes.  Returns the bytes written.
 */
size_t klog_entry_encode(uint8_t *buf, const void *payload, size_t len);

/*
 * The length field of the entry at p if its header is sane: magic 0, 1 or
 * 2 and a length that holds that magic's header (magic 2: and the body's
 * 40-byte header) and is at most KLOG_MAX_ENTRY_LENGTH; 0 if not, or if
 * left bytes do not reach the magic.  The entry may run past left.
 */
uint32_t klog_entry_header_ok(const uint8_t *p, size_t left);

/*
 * The length field of a whole, valid top-level entry at p, with left bytes
 * there: a sane header, all of it present, a known codec, its CRC matching
 * (magic 2: the CRC-32C of the body; and the entry as klog_iter_next()
 * takes it: as klog_batch_seal() leaves it, not transactional); 0 if not.  What a reader looks for a byte at a time to find its footing
 * again after damage (klog-dump --salvage, klog-consume --skip-corrupt).
 */
uint32_t klog_entry_valid(const uint8_t *p, size_t left);

/*
 * Compress the message set set[0..len) with gzip at the given zlib level and
 * wrap it in one magic-1 entry (attributes = gzip).  On success *out is a new
 * buffer the caller frees with free(), *outlen its size.  An empty set gives
 * an empty output (no wrapper), as in Kafka 0.7.  -KLOG_ETOOBIG if the set's
 * worst-case compressed size would not fit one entry; -KLOG_EINVAL for a bad
 * level.  The gzip stream is klog_codec_deflate()'s.
 */
int klog_gzip_wrap(const uint8_t *set, size_t len, int level, uint8_t **out,
    size_t *outlen);

/* One message as the iterator sees it.  Pointers point into the iterated
 * buffer (or the iterator's own inflated buffer) and stay valid until the
 * next call to klog_iter_next() or klog_iter_free(). */
typedef struct klog_msg {
	int64_t offset;        /* entry offset (a wrapper's, for inner ones) */
	int64_t next_offset;   /* where a reader resumes after this message */
	int64_t pos;           /* byte position of the entry in the buffer
	                          (of the wrapper, for inner messages) */
	uint32_t length;       /* the entry's length field */
	uint8_t magic;
	uint8_t attributes;    /* 0 for magic 0 and for a record */
	uint8_t codec;         /* attributes & KLOG_CODEC_MASK (magic 2:
	                          the body's attributes & 7; 0 for a record,
	                          which is never compressed itself) */
	uint8_t depth;         /* 0 top level, 1 inside a wrapper or batch */
	uint32_t crc_stored;   /* a record: its entry's CRC-32C */
	uint32_t crc_computed; /* equals crc_stored unless corrupt; 0 with
	                          KLOG_ITER_NOCRC; crc_stored where
	                          KLOG_ITER_OUTER_CHECKED vouches for it */
	int valid;             /* CRC matches (always 1 with KLOG_ITER_NOCRC) */
	const uint8_t *payload; /* a magic-2 entry met shallow: its body; a
	                          record: its value (NULL when null) */
	uint32_t payload_len;  /* 0 for a null value */
	/* A record of a magic-2 entry (record.h), met with KLOG_ITER_DEEP;
	 * its length is the record's size, its magic 2.  For every other
	 * message: timestamp KLOG_NO_TIMESTAMP, key NULL and key_len -1, no
	 * headers, delta 0, batch NULL (a magic-2 entry met shallow has batch
	 * and batch_len set, and the rest so). */
	int64_t timestamp;     /* the record's (CreateTime), or the batch's
	                          maxTimestamp under LogAppendTime
	                          (batchiter.h) */
	const uint8_t *key;
	int32_t key_len;
	const uint8_t *headers; /* the record's headers (klog_record_t) */
	size_t headers_len;
	uint32_t header_count;
	int32_t delta;         /* offset delta: the Kafka offset is
	                          offset + delta */
	const uint8_t *batch;  /* the entry's body (klog_batch_read()) */
	uint32_t batch_len;
} klog_msg_t;

enum klog_iter_flags {
	KLOG_ITER_DEEP = 1 << 0,  /* descend into gzip wrappers and
	                             magic-2 entries' records */
	KLOG_ITER_NOCRC = 1 << 1, /* skip CRC computation */
	KLOG_ITER_OUTER_CHECKED = 1 << 2, /* the top-level CRCs were checked
	                                     (crcpool.h): taken as matching;
	                                     inner ones are still computed */
	KLOG_ITER_RECORDS_CHECKED = 1 << 3, /* klog_msgset_validate() only:
	                                       magic-2 entries' records were
	                                       read as batchiter.h reads them
	                                       (kbatch.h's ingest) */
};

/* Iterator over a message set in memory.  Stack-allocate it; fields are
 * private. */
typedef struct klog_iter {
	const uint8_t *buf;
	size_t len;
	size_t pos;            /* next top-level entry */
	int64_t base;          /* offset of buf[0] */
	unsigned flags;
	size_t max_inflate;
	uint8_t *inner;        /* inflated wrapper payload, owned */
	size_t inner_len, inner_pos;
	int64_t wrapper_offset, wrapper_next, wrapper_pos;
	uint32_t wrapper_length;
	int opened;            /* a wrapper's inner set or a batch is open */
	int in_batch;          /* handing out batch's records */
	klog_batchiter_t batch;
	int error_pos_valid;
	int64_t error_pos;     /* offset of the entry an error refers to */
	const char *error;     /* static text of the last error */
} klog_iter_t;

/*
 * Start iterating buf[0..len), whose first byte has offset base.  With
 * KLOG_ITER_DEEP, wrappers and magic-2 entries' records are inflated up to
 * max_inflate bytes each (0 means a default of 64 MiB).
 */
void klog_iter_init(klog_iter_t *it, const void *buf, size_t len, int64_t base,
    unsigned flags, size_t max_inflate);

/*
 * Next message.  Returns 1 and fills *m; 0 at the clean end of the buffer;
 * -KLOG_EPARTIAL when the remaining bytes are the start of an entry that the
 * buffer cuts (klog_iter_offset() is where it starts: a reader fetches again
 * from there); -KLOG_ECORRUPT for a length below the header size or above
 * KLOG_MAX_ENTRY_LENGTH (magic 2: below its 46 bytes), an unknown magic or
 * codec, a magic-2 entry not as klog_batch_seal() leaves it (its attrs
 * byte not the body's attributes' low byte, its lastOffsetDelta not
 * length + 3, no record), a wrapper that does not inflate or whose inner
 * set is malformed (or holds a magic-2 entry), a magic-2 entry met deep
 * whose records do not decompress or read (batchiter.h);
 * -KLOG_EUNSUPPORTED for a transactional or control batch (Kafka's
 * transactions are not klog's) and for a magic-1 snappy wrapper met with
 * KLOG_ITER_DEEP (a magic-2 entry opens with every codec); -KLOG_ETOOBIG
 * for a wrapper or records over max_inflate.  After an error,
 * klog_iter_error() describes it and klog_iter_error_offset() names the
 * offending entry; the iterator then stays at that entry.  A CRC mismatch
 * is not an error here: it returns 1 with m->valid == 0 (and does not
 * descend into a corrupt wrapper or batch), so that a forensic reader can
 * report it and go on.
 */
int klog_iter_next(klog_iter_t *it, klog_msg_t *m);

/* Offset of the next top-level entry (after a partial tail: its start). */
int64_t klog_iter_offset(const klog_iter_t *it);
const char *klog_iter_error(const klog_iter_t *it);
int64_t klog_iter_error_offset(const klog_iter_t *it);

/* Release the iterator's inflate buffers. */
void klog_iter_free(klog_iter_t *it);

/* What klog_msgset_validate() found. */
typedef struct klog_msgset_info {
	size_t valid_bytes;    /* bytes of complete, valid top-level entries */
	uint32_t messages;     /* messages, counting inner ones and records
	                          when deep */
	uint32_t entries;      /* top-level entries */
	uint32_t max_payload;  /* largest top-level payload (magic 2: body) */
	int64_t bad_offset;    /* offset of the first bad entry (of the cut
	                          one for -KLOG_EPARTIAL), or -1 */
} klog_msgset_info_t;

/*
 * Check a message set as a broker does before appending it: every length,
 * magic, codec and CRC, inner ones too when flags has KLOG_ITER_DEEP.
 * With KLOG_ITER_OUTER_CHECKED the top-level CRCs are taken as checked
 * (klog_crcpool_sets()); inner ones still are.  A magic-2 entry must be
 * as klog_iter_next() takes it (as klog_batch_seal() leaves it: its attrs
 * byte the body's attributes' low byte, its stored lastOffsetDelta length
 * + 3, a codec 0-4, at least one record; not transactional), its CRC-32C
 * matching; deep, its records as batchiter.h checks them (offsetDelta i
 * for the i-th, recordsCount of them), within 64 MiB decompressed, unless
 * flags has KLOG_ITER_RECORDS_CHECKED, when its recordsCount is taken as
 * its records' count unread (the caller read them so, within that bound:
 * a Kafka producer's batch, inflated once).  So validation stops where
 * the iterator would.  Returns 0 if the whole
 * buffer is valid complete entries; -KLOG_EPARTIAL if it ends in a cut
 * entry; -KLOG_EUNSUPPORTED for a transactional or control batch or a
 * snappy wrapper met deep; -KLOG_ECORRUPT (or the iterator's other
 * errors) at the first bad entry.  *info is filled in every case.
 */
int klog_msgset_validate(const void *buf, size_t len, unsigned flags,
    klog_msgset_info_t *info);

#endif
