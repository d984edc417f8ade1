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


def main():
    for name, entries in FIXTURES.items():
        pos = 0
        print(name)
        for label, e in entries:
            print("  %4d (0x%02x) %4d bytes  %s" % (pos, pos, len(e), label))
            pos += len(e)
        print("  total %d bytes" % pos)
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(b"".join(e for _, e in entries))


if __name__ == "__main__":
    main()
