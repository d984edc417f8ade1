/*
 * Kafka's codecs, both ways (codec.h).
 *
 * Every decoder grows its output up to the caller's max and no further:
 * once the buffer holds max bytes, the codec writes into a one-byte
 * spare, and a byte there means the data is over the limit; the end of
 * the stream there means it was exactly max.
 *
 * LZ4 and KAFKA-3160: librdkafka rewrites the wrong header checksum byte
 * with XXH32; liblz4 does not export its XXH32 publicly, so when LZ4F
 * reports a bad header checksum the right byte is taken from the header
 * LZ4F_compressBegin() writes for the same frame settings, and the frame is
 * decoded again with it.  That costs an allocation or two, only on that
 * path.
 *
 * Zstandard is read with the streaming API so that a frame that says a
 * small content size cannot make it write past the buffer grown so far,
 * and one that says none (the Java producer's) still reads.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <lz4frame.h>
#include <lz4hc.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "klog/base/error.h"
#include "klog/storage/codec.h"

#define GZIP_WINDOW (15 + 16) /* zlib's windowBits for gzip framing */
#define XERIAL_HEADER 16
#define FIRST_CAP 4096
#define MAX_IN ((size_t)1 << 30) /* KLOG_MAX_ENTRY_LENGTH (format.h) */

static const uint8_t xerial_magic[8] = {
	0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0,
};

const char *
klog_codec_name(int codec)
{
	static const char *const names[] = { "none", "gzip", "snappy", "lz4",
	    "zstd" };

	return codec >= 0 && codec <= KLOG_CODEC_MAX ? names[codec] :
	    "invalid";
}

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

/* ---- gzip ---- */

static int
inflate_code(int zr)
{
	return zr == Z_MEM_ERROR ? -KLOG_ENOMEM : -KLOG_ECORRUPT;
}

/* Room to inflate into at first: a guess from typical ratios. */
static size_t
first_cap(size_t len, size_t max_out)
{
	size_t cap = len < SIZE_MAX / 4 ? len * 4 : SIZE_MAX;

	if (cap < 4096)
		cap = 4096;
	return cap < max_out ? cap : max_out;
}

/*
 * A decoder's output, full and under max: twice as big, or
 * max (FIRST_CAP at first).  Never past max: at the limit a decoder
 * writes into a one-byte spare, and a byte there is over it.
 */
static int
grow(uint8_t **buf, size_t *cap, size_t max)
{
	size_t want = *cap ? (*cap < max / 2 ? *cap * 2 : max) :
	    (max < FIRST_CAP ? max : FIRST_CAP);
	uint8_t *nbuf = realloc(*buf, want);

	if (nbuf == NULL)
		return -KLOG_ENOMEM;
	*buf = nbuf;
	*cap = want;
	return 0;
}

/*
 * Point zs's output at the room left in *buf, doubling the buffer up to
 * max_out; once it holds max_out bytes, at the one-byte spare instead.
 * Returns 1 when at the limit, 0 otherwise, or -KLOG_ENOMEM.
 */
static int
out_room(z_stream *zs, uint8_t **buf, size_t *cap, size_t have,
    size_t max_out, uint8_t *spare)
{
	if (have == *cap && *cap < max_out && grow(buf, cap, max_out) < 0)
		return -KLOG_ENOMEM;
	if (have == *cap) {
		zs->next_out = spare;
		zs->avail_out = 1;
		return 1;
	}
	zs->next_out = *buf + have;
	zs->avail_out = *cap - have < UINT_MAX ? (uInt)(*cap - have) :
	    UINT_MAX;
	return 0;
}

/*
 * At the limit, inflate goes on into a one-byte spare: if the stream still
 * yields a byte it is over the limit; if it ends, the output was exactly
 * max_out.  Several gzip members in a row are one stream, as gzip(1) and
 * Java's GZIPInputStream read them.
 */
static int
gunzip(const uint8_t *in, size_t len, size_t max_out, uint8_t **out,
    size_t *outlen)
{
	z_stream zs;
	uint8_t *buf, spare;
	size_t cap, have = 0, left = len;
	int zr, r, at_limit;

	*out = NULL;
	*outlen = 0;
	memset(&zs, 0, sizeof(zs));
	if ((zr = inflateInit2(&zs, GZIP_WINDOW)) != Z_OK)
		return inflate_code(zr);
	cap = first_cap(len, max_out);
	if ((buf = malloc(cap ? cap : 1)) == NULL) {
		r = -KLOG_ENOMEM;
		goto out;
	}
	zs.next_in = (Bytef *)in;
	for (;;) {
		if (zs.avail_in == 0 && left > 0) {
			zs.avail_in = left < UINT_MAX ? (uInt)left : UINT_MAX;
			left -= zs.avail_in;
		}
		at_limit = out_room(&zs, &buf, &cap, have, max_out, &spare);
		if (at_limit < 0) {
			r = at_limit;
			goto out;
		}
		zr = inflate(&zs, Z_NO_FLUSH);
		if (at_limit && zs.avail_out == 0) {
			r = -KLOG_ETOOBIG;
			goto out;
		}
		if (!at_limit)
			have = (size_t)(zs.next_out - buf);
		if (zr == Z_STREAM_END && zs.avail_in == 0 && left == 0)
			break;
		if (zr == Z_STREAM_END)
			zr = inflateReset(&zs);
		/* Z_BUF_ERROR: no progress with output room left, so the
		 * input ran out before the stream ended. */
		if (zr != Z_OK) {
			r = inflate_code(zr);
			goto out;
		}
	}
	*out = buf;
	*outlen = have;
	buf = NULL;
	r = 0;
out:
	inflateEnd(&zs);
	free(buf);
	return r;
}

/* ---- snappy, lz4, zstd ---- */

/* One raw snappy block into *out, refusing more than max bytes. */
static int
snappy_raw(const uint8_t *in, size_t len, size_t max, uint8_t **out,
    size_t *outlen)
{
	size_t n;

	if (snappy_uncompressed_length((const char *)in, len, &n) != SNAPPY_OK)
		return -KLOG_ECORRUPT;
	if (n > max)
		return -KLOG_ETOOBIG;
	if ((*out = malloc(n ? n : 1)) == NULL)
		return -KLOG_ENOMEM;
	if (snappy_uncompress((const char *)in, len, (char *)*out, &n) !=
	    SNAPPY_OK) {
		free(*out);
		*out = NULL;
		return -KLOG_ECORRUPT;
	}
	*outlen = n;
	return 0;
}

static int
xerial_header_at(const uint8_t *p, size_t left)
{
	return left >= XERIAL_HEADER &&
	    memcmp(p, xerial_magic, sizeof(xerial_magic)) == 0;
}

/*
 * Walk the blocks of a xerial stream: with dst NULL, add their sizes up into
 * *total (refusing past max); else decode them into dst.
 */
static int
xerial_blocks(const uint8_t *in, size_t len, size_t max, uint8_t *dst,
    size_t *total)
{
	size_t pos = 0, n, have = 0;
	uint32_t blen;

	while (pos < len) {
		if (xerial_header_at(in + pos, len - pos)) {
			pos += XERIAL_HEADER;
			continue;
		}
		if (len - pos < 4)
			return -KLOG_ECORRUPT;
		blen = be32(in + pos);
		pos += 4;
		if (blen > len - pos || snappy_uncompressed_length(
		    (const char *)in + pos, blen, &n) != SNAPPY_OK)
			return -KLOG_ECORRUPT;
		if (dst == NULL && n > max - have)
			return -KLOG_ETOOBIG;
		if (dst != NULL && (snappy_uncompress((const char *)in + pos,
		    blen, (char *)dst + have, &n) != SNAPPY_OK))
			return -KLOG_ECORRUPT;
		have += n;
		pos += blen;
	}
	*total = have;
	return 0;
}

static int
snappy_unwrap(const uint8_t *in, size_t len, size_t max, uint8_t **out,
    size_t *outlen)
{
	size_t n;
	int r;

	if (!xerial_header_at(in, len))
		return snappy_raw(in, len, max, out, outlen);
	if ((r = xerial_blocks(in, len, max, NULL, &n)) < 0)
		return r;
	if ((*out = malloc(n ? n : 1)) == NULL)
		return -KLOG_ENOMEM;
	if ((r = xerial_blocks(in, len, max, *out, outlen)) < 0) {
		free(*out);
		*out = NULL;
	}
	return r;
}

/*
 * The header LZ4F_compressBegin() writes for the frame settings of in's
 * header, into fix (LZ4F_HEADER_SIZE_MAX bytes); its length, or 0 if in's
 * header cannot be rebuilt byte for byte but for the checksum.
 */
static size_t
lz4_fixed_header(const uint8_t *in, size_t len, uint8_t *fix)
{
	LZ4F_preferences_t prefs;
	LZ4F_cctx *cctx;
	size_t hlen, w;
	uint8_t flg;

	if (len < 7 || ((flg = in[4]) >> 6) != 1)
		return 0;
	hlen = 7 + ((flg & 0x08) ? 8 : 0) + ((flg & 0x01) ? 4 : 0);
	if (len < hlen)
		return 0;
	memset(&prefs, 0, sizeof(prefs));
	prefs.autoFlush = 1;
	prefs.frameInfo.blockSizeID = (LZ4F_blockSizeID_t)((in[5] >> 4) & 7);
	prefs.frameInfo.blockMode = (flg & 0x20) ? LZ4F_blockIndependent :
	    LZ4F_blockLinked;
	prefs.frameInfo.blockChecksumFlag = (flg & 0x10) ?
	    LZ4F_blockChecksumEnabled : LZ4F_noBlockChecksum;
	prefs.frameInfo.contentChecksumFlag = (flg & 0x04) ?
	    LZ4F_contentChecksumEnabled : LZ4F_noContentChecksum;
	for (w = 0; (flg & 0x08) && w < 8; w++)
		prefs.frameInfo.contentSize |= (unsigned long long)in[6 + w] <<
		    (8 * w);
	for (w = 0; (flg & 0x01) && w < 4; w++)
		prefs.frameInfo.dictID |= (unsigned)in[hlen - 5 + w] << (8 * w);
	if (LZ4F_isError(LZ4F_createCompressionContext(&cctx, LZ4F_VERSION)))
		return 0;
	w = LZ4F_compressBegin(cctx, fix, LZ4F_HEADER_SIZE_MAX, &prefs);
	LZ4F_freeCompressionContext(cctx);
	if (LZ4F_isError(w) || w != hlen || memcmp(fix, in, hlen - 1) != 0)
		return 0;
	return hlen;
}

/*
 * Decode the one LZ4 frame in[0..len) (its first fixlen bytes replaced by
 * fix[] when fixlen > 0) into a buffer grown up to max bytes; at the
 * limit, LZ4F writes into a one-byte spare, and a byte there is over it.
 * *bad_hc tells a header checksum error from other corruption.
 */
static int
lz4_decode(const uint8_t *in, size_t len, const uint8_t *fix, size_t fixlen,
    size_t max, uint8_t **out, size_t *outlen, int *bad_hc)
{
	LZ4F_dctx *dctx;
	const uint8_t *src = fixlen ? fix : in;
	size_t left = fixlen ? fixlen : len, cap = 0, have = 0, dsz, ssz, hint;
	uint8_t *buf = NULL, spare, *dst;
	int r, at_limit;

	if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)))
		return -KLOG_ENOMEM;
	for (;;) {
		if (have == cap && cap < max && grow(&buf, &cap, max) < 0) {
			r = -KLOG_ENOMEM;
			goto out;
		}
		at_limit = have == cap;
		dst = at_limit ? &spare : buf + have;
		dsz = at_limit ? 1 : cap - have;
		ssz = left;
		hint = LZ4F_decompress(dctx, dst, &dsz, src, &ssz, NULL);
		if (LZ4F_isError(hint)) {
			*bad_hc = strcmp(LZ4F_getErrorName(hint),
			    "ERROR_headerChecksum_invalid") == 0;
			r = -KLOG_ECORRUPT;
			goto out;
		}
		if (at_limit && dsz > 0) {
			r = -KLOG_ETOOBIG;
			goto out;
		}
		if (!at_limit)
			have += dsz;
		src += ssz;
		left -= ssz;
		if (hint == 0)
			break;
		if (ssz == 0 && dsz == 0 && left > 0) {
			r = -KLOG_ECORRUPT;     /* no progress: never loop */
			goto out;
		}
		if (left == 0 && fixlen > 0 && src == fix + fixlen) {
			src = in + fixlen;
			left = len - fixlen;
		} else if (left == 0 && dsz == 0) {
			r = -KLOG_ECORRUPT;     /* the frame is cut */
			goto out;
		}
	}
	/* Bytes after the frame: not what a Kafka producer writes. */
	if (left > 0 || (fixlen > 0 && src == fix + fixlen && len > fixlen)) {
		r = -KLOG_ECORRUPT;
		goto out;
	}
	*out = buf;
	*outlen = have;
	buf = NULL;
	r = 0;
out:
	LZ4F_freeDecompressionContext(dctx);
	free(buf);
	return r;
}

static int
lz4_unwrap(const uint8_t *in, size_t len, size_t max, uint8_t **out,
    size_t *outlen)
{
	uint8_t fix[LZ4F_HEADER_SIZE_MAX];
	size_t fixlen;
	int r, bad_hc = 0;

	r = lz4_decode(in, len, NULL, 0, max, out, outlen, &bad_hc);
	if (r != -KLOG_ECORRUPT || !bad_hc)
		return r;
	if ((fixlen = lz4_fixed_header(in, len, fix)) == 0)
		return r;
	return lz4_decode(in, len, fix, fixlen, max, out, outlen, &bad_hc);
}

/*
 * Decode the zstd frames in[0..len) into a buffer grown up to max bytes,
 * as lz4_decode() does; the window a frame asks for is zstd's to allocate,
 * within its default limit (128 MiB, touched only as far as it is written).
 */
static int
zstd_unwrap(const uint8_t *in, size_t len, size_t max, uint8_t **out,
    size_t *outlen)
{
	ZSTD_DCtx *dctx = ZSTD_createDCtx();
	ZSTD_inBuffer src = { in, len, 0 };
	ZSTD_outBuffer dst;
	size_t cap = 0, have = 0, hint = 1;
	uint8_t *buf = NULL, spare;
	int r, at_limit;

	if (dctx == NULL)
		return -KLOG_ENOMEM;
	while (src.pos < src.size || hint != 0) {
		if (have == cap && cap < max && grow(&buf, &cap, max) < 0) {
			r = -KLOG_ENOMEM;
			goto out;
		}
		at_limit = have == cap;
		dst = (ZSTD_outBuffer){ at_limit ? &spare : buf + have,
		    at_limit ? 1 : cap - have, 0 };
		hint = ZSTD_decompressStream(dctx, &dst, &src);
		if (ZSTD_isError(hint)) {
			r = -KLOG_ECORRUPT;
			goto out;
		}
		if (at_limit && dst.pos > 0) {
			r = -KLOG_ETOOBIG;
			goto out;
		}
		have += at_limit ? 0 : dst.pos;
		/* Input all read, room left, and the frame not done: cut
		 * (no input at all too). */
		if (src.pos == src.size && hint != 0 && dst.pos < dst.size) {
			r = -KLOG_ECORRUPT;
			goto out;
		}
	}
	*out = buf;
	*outlen = have;
	buf = NULL;
	r = 0;
out:
	ZSTD_freeDCtx(dctx);
	free(buf);
	return r;
}

int
klog_codec_inflate(int codec, const uint8_t *in, size_t len, size_t max,
    uint8_t **out, size_t *outlen)
{
	int r;

	*out = NULL;
	*outlen = 0;
	switch (codec) {
	case KLOG_CODEC_GZIP:
		r = gunzip(in, len, max, out, outlen);
		break;
	case KLOG_CODEC_SNAPPY:
		r = snappy_unwrap(in, len, max, out, outlen);
		break;
	case KLOG_CODEC_LZ4:
		r = lz4_unwrap(in, len, max, out, outlen);
		break;
	case KLOG_CODEC_ZSTD:
		r = zstd_unwrap(in, len, max, out, outlen);
		break;
	default:
		return -KLOG_ECORRUPT;
	}
	/* An empty output under a limit of 0 grows no buffer. */
	if (r == 0 && *out == NULL && (*out = malloc(1)) == NULL)
		r = -KLOG_ENOMEM;
	return r;
}

/* ---- compression ---- */

static int
gzip_deflate(int level, const uint8_t *in, size_t len, uint8_t **out,
    size_t *outlen)
{
	z_stream zs;
	uLong bound;
	int zr, r;

	memset(&zs, 0, sizeof(zs));
	if (level < KLOG_CODEC_LEVEL_DEFAULT || level > 9)
		return -KLOG_EINVAL;
	zr = deflateInit2(&zs, level, Z_DEFLATED, GZIP_WINDOW, 8,
	    Z_DEFAULT_STRATEGY);
	if (zr != Z_OK)
		return zr == Z_MEM_ERROR ? -KLOG_ENOMEM : -KLOG_EINVAL;
	/* In is at most MAX_IN, so every count fits zlib's uInt. */
	bound = deflateBound(&zs, len);
	if ((*out = malloc(bound)) == NULL) {
		r = -KLOG_ENOMEM;
		goto out;
	}
	zs.next_in = (Bytef *)(uintptr_t)in;
	zs.avail_in = (uInt)len;
	zs.next_out = *out;
	zs.avail_out = (uInt)bound;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END) {
		r = -KLOG_EINVAL;
		goto out;
	}
	*outlen = zs.total_out;
	r = 0;
out:
	deflateEnd(&zs);
	return r;
}

static int
snappy_deflate(const uint8_t *in, size_t len, uint8_t **out, size_t *outlen)
{
	size_t n = snappy_max_compressed_length(len);

	if ((*out = malloc(n)) == NULL)
		return -KLOG_ENOMEM;
	if (snappy_compress((const char *)in, len, (char *)*out, &n) !=
	    SNAPPY_OK)
		return -KLOG_EINVAL;
	*outlen = n;
	return 0;
}

static int
lz4_deflate(int level, const uint8_t *in, size_t len, uint8_t **out,
    size_t *outlen)
{
	LZ4F_preferences_t prefs;
	size_t n;

	if (level < KLOG_CODEC_LEVEL_DEFAULT || level > LZ4HC_CLEVEL_MAX)
		return -KLOG_EINVAL;
	memset(&prefs, 0, sizeof(prefs));
	/* Kafka's own frame: independent 64 KiB blocks, no content size
	 * (KafkaLZ4BlockOutputStream's, which its reader expects). */
	prefs.compressionLevel = level < 0 ? 0 : level;
	prefs.frameInfo.blockSizeID = LZ4F_max64KB;
	prefs.frameInfo.blockMode = LZ4F_blockIndependent;
	n = LZ4F_compressFrameBound(len, &prefs);
	if ((*out = malloc(n)) == NULL)
		return -KLOG_ENOMEM;
	n = LZ4F_compressFrame(*out, n, in, len, &prefs);
	if (LZ4F_isError(n))
		return -KLOG_EINVAL;
	*outlen = n;
	return 0;
}

static int
zstd_deflate(int level, const uint8_t *in, size_t len, uint8_t **out,
    size_t *outlen)
{
	size_t n = ZSTD_compressBound(len);

	if (level == KLOG_CODEC_LEVEL_DEFAULT)
		level = ZSTD_CLEVEL_DEFAULT;
	if (level < 1 || level > ZSTD_maxCLevel())
		return -KLOG_EINVAL;
	if ((*out = malloc(n)) == NULL)
		return -KLOG_ENOMEM;
	n = ZSTD_compress(*out, n, in, len, level);
	if (ZSTD_isError(n))
		return ZSTD_getErrorCode(n) == ZSTD_error_memory_allocation ?
		    -KLOG_ENOMEM : -KLOG_EINVAL;
	*outlen = n;
	return 0;
}

int
klog_codec_deflate(int codec, int level, const uint8_t *in, size_t len,
    uint8_t **out, size_t *outlen)
{
	int r;

	*out = NULL;
	*outlen = 0;
	if (len > MAX_IN)
		return -KLOG_ETOOBIG;
	switch (codec) {
	case KLOG_CODEC_GZIP:
		r = gzip_deflate(level, in, len, out, outlen);
		break;
	case KLOG_CODEC_SNAPPY:
		r = snappy_deflate(in, len, out, outlen);
		break;
	case KLOG_CODEC_LZ4:
		r = lz4_deflate(level, in, len, out, outlen);
		break;
	case KLOG_CODEC_ZSTD:
		r = zstd_deflate(level, in, len, out, outlen);
		break;
	default:
		return -KLOG_EINVAL;
	}
	if (r < 0) {
		free(*out);
		*out = NULL;
		*outlen = 0;
	}
	return r;
}
