#!/usr/bin/env python3
"""Write the dump-*.bin fixtures of klog-dump's tests (tests/bats/01x-dump-*).

The generated files are committed; run this again only to change them, and
update the bats figures it prints.  Layout per include/klog/format.h:
big-endian lengths, zlib CRC-32 of the payload, gzip wrappers as magic-1
entries with attributes 1 (gzip streams with mtime 0, so the bytes are the
same on every run with the same zlib).

dump-valid.bin      7 entries: magic 0 and 1, empty, binary, UTF-8 and
                    escape-worthy payloads, one gzip wrapper of 3 messages
dump-crc.bin        3 magic-0 entries, the second with a flipped payload bit
dump-truncated.bin  2 entries, then 10 bytes of a third
dump-badlen.bin     1 entry, then a length field of 0xffffffff
dump-notseg.bin     a line of text
dump-empty.bin      nothing
dump-deepbad.bin    a gzip wrapper whose second inner message has a bad CRC
                    (the wrapper's own CRC is right)
dump-badgzip.bin    a "gzip" wrapper whose payload is not gzip, then one entry
dump-snappy.bin     a snappy wrapper (klog cannot open it), then one entry

Magic-2 entries (include/klog/storage/record.h: a Kafka RecordBatch v2's body
from its attributes on, CRC-32C; lastOffsetDelta = length + 3), written here
from Kafka's spec and read back with kafka-python's own reader when it is
installed (/usr/bin/python3), so the bytes are Kafka's and not only ours:

dump-records.bin    a plain line, a batch of 3 records (keys, a null key, a
                    null value, headers, binary ones), a gzip batch of an
                    idempotent producer, a LogAppendTime batch, a plain line
dump-m2-crc.bin     a batch with one value byte changed, its CRC-32C kept,
                    then a plain line
dump-m2-delta.bin   a batch whose lastOffsetDelta is not length + 3 (CRC-32C
                    right), then a plain line
dump-m2-record.bin  a batch whose second record says offsetDelta 5 (CRC-32C
                    right: only --deep sees it), then a plain line
"""
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def m0(payload):
    return struct.pack(">IBI", 5 + len(payload), 0,
                       zlib.crc32(payload)) + payload


def m1(payload, attrs=0):
    return struct.pack(">IBBI", 6 + len(payload), 1, attrs,
                       zlib.crc32(payload)) + payload


def gzip(data):
    c = zlib.compressobj(6, zlib.DEFLATED, 15 + 16)
    return c.compress(data) + c.flush()


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def varint(v):
    """Kafka's zigzag varint (protobuf's)."""
    u = (v << 1) ^ (v >> 63)
    out = bytearray()
    while True:
        if u < 0x80:
            out.append(u)
            return bytes(out)
        out.append((u & 0x7F) | 0x80)
        u >>= 7


def blob(b):
    return varint(-1) if b is None else varint(len(b)) + b


def record(ts_delta, delta, key, value, headers=()):
    body = (b"\x00" + varint(ts_delta) + varint(delta) + blob(key) +
            blob(value) + varint(len(headers)))
    for k, v in headers:
        body += varint(len(k)) + k + blob(v)
    return varint(len(body)) + body


def m2(records, first_ts, codec=0, producer=(-1, -1, -1), log_append=None,
       last_delta=None, deltas=None):
    """A magic-2 entry of records (ts_delta, key, value, headers) with
    offsetDelta 0, 1, ... (or deltas); log_append: the broker's time
    (LogAppendTime)."""
    deltas = deltas or range(len(records))
    raw = b"".join(record(r[0], d, *r[1:]) for d, r in zip(deltas, records))
    if codec == 1:
        raw = gzip(raw)
    attrs = codec | (0x08 if log_append is not None else 0)
    max_ts = (log_append if log_append is not None else
              first_ts + max(r[0] for r in records))
    length = 6 + 40 + len(raw)
    body = struct.pack(">hiqqqhii", attrs,
                       length + 3 if last_delta is None else last_delta,
                       first_ts, max_ts, producer[0], producer[1],
                       producer[2], len(records)) + raw
    return struct.pack(">IBBI", length, 2, attrs & 0xFF, crc32c(body)) + body


def as_kafka(entry, base_offset):
    """The Kafka RecordBatch a fetch answers for entry (record.h)."""
    n = struct.unpack(">I", entry[:4])[0]
    return (struct.pack(">qiib", base_offset, n + 3, 0, 2) + entry[6:10] +
            entry[10:])


def kafka_check(entry):
    """Read entry back with kafka-python's reader, if there is one."""
    try:
        from kafka.record.default_records import DefaultRecordBatch
    except ImportError:
        return "(kafka-python not here: not cross-checked)"
    batch = DefaultRecordBatch(bytearray(as_kafka(entry, 0)))
    assert batch.validate_crc(), "kafka-python: CRC-32C"
    recs = [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in batch]
    return "kafka-python reads %d records: %r" % (len(recs), recs)


def flip(entry):
    """The entry with the low bit of its first payload byte flipped."""
    b = bytearray(entry)
    b[4 + (5 if entry[4] == 0 else 6)] ^= 0x01
    return bytes(b)


FIXTURES = {
    "dump-valid.bin": [
        ("magic 0 'hello'", m0(b"hello")),
        ("magic 0 empty", m0(b"")),
        ("magic 0 binary", m0(b"\x00\x01\xfe\xff binary")),
        ("magic 0 UTF-8", m0("h\u00e9llo \u20ac".encode())),
        ("magic 1 codec none", m1(b"magic one")),
        ("gzip wrapper of 'one' 'two' 'three'",
         m1(gzip(m1(b"one") + m1(b"two") + m1(b"three")), attrs=1)),
        ("magic 0 with quote, backslash, newline, tab",
         m0(b'q"b\\n\nt\t end')),
    ],
    "dump-crc.bin": [
        ("magic 0 'alpha'", m0(b"alpha")),
        ("magic 0 'bravo' stored as 'cravo'", flip(m0(b"bravo"))),
        ("magic 0 'charlie'", m0(b"charlie")),
    ],
    "dump-truncated.bin": [
        ("magic 0 'alpha'", m0(b"alpha")),
        ("magic 0 'bravo'", m0(b"bravo")),
        ("magic 0 'charlie' cut after 10 of 16 bytes", m0(b"charlie")[:10]),
    ],
    "dump-badlen.bin": [
        ("magic 0 'alpha'", m0(b"alpha")),
        ("length 0xffffffff and junk", b"\xff\xff\xff\xff\x00junk"),
    ],
    "dump-notseg.bin": [
        ("text", b"This is not a klog segment.\n"),
    ],
    "dump-empty.bin": [],
    "dump-deepbad.bin": [
        ("magic 0 'before'", m0(b"before")),
        ("gzip wrapper of 'ok', 'bad' (bit flipped), 'fine'",
         m1(gzip(m1(b"ok") + flip(m1(b"bad")) + m1(b"fine")), attrs=1)),
        ("magic 0 'after'", m0(b"after")),
    ],
    "dump-badgzip.bin": [
        ("codec gzip, payload not gzip", m1(b"not gzip at all", attrs=1)),
        ("magic 0 'after'", m0(b"after")),
    ],
    "dump-snappy.bin": [
        ("codec snappy", m1(b"\x82SNAPPY\x00 whatever", attrs=2)),
        ("magic 0 'after'", m0(b"after")),
    ],
}


TS = 1700000000000    # 2023-11-14T22:13:20.000Z
BATCH = [(0, b"k1", b"v1", [(b"h", b"x")]),
         (5, None, b"two"),
         (1234, b"\x00\xff", None, [(b"bin", b"\xff\x00"), (b"nul", None)])]
FIXTURES.update({
    "dump-records.bin": [
        ("magic 0 'plain'", m0(b"plain")),
        ("magic 2, 3 records (BATCH), CreateTime, no producer",
         m2(BATCH, TS)),
        ("magic 2 gzip, 2 records, producer 1000 epoch 2 sequence 5",
         m2([(0, b"a", b"alpha"), (1, b"b", b"bravo")], TS + 60000, codec=1,
            producer=(1000, 2, 5))),
        ("magic 2, 1 record, LogAppendTime (the broker's TS + 1 h)",
         m2([(0, None, b"appended")], TS, log_append=TS + 3600000)),
        ("magic 0 'end'", m0(b"end")),
    ],
    "dump-m2-crc.bin": [
        ("magic 2 'k1' 'v1' stored as 'w1' (CRC-32C kept)",
         m2(BATCH[:1], TS).replace(b"v1", b"w1")),
        ("magic 0 'after'", m0(b"after")),
    ],
    "dump-m2-delta.bin": [
        ("magic 2, lastOffsetDelta 2 (not length + 3)",
         m2(BATCH[:1], TS, last_delta=2)),
        ("magic 0 'after'", m0(b"after")),
    ],
    "dump-m2-record.bin": [
        ("magic 2, its second record's offsetDelta 5",
         m2([(0, None, b"one"), (0, None, b"two")], TS, deltas=[0, 5])),
        ("magic 0 'after'", m0(b"after")),
    ],
})


def main():
    for name, entries in FIXTURES.items():
        pos = 0
        print(name)
        for label, e in entries:
            print("  %4d (0x%02x) %4d bytes  %s" % (pos, pos, len(e), label))
            if e[4:5] == b"\x02" and name == "dump-records.bin":
                print("      " + kafka_check(e))
            pos += len(e)
        print("  total %d bytes" % pos)
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(b"".join(e for _, e in entries))


if __name__ == "__main__":
    main()
