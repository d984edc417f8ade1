"""bench/tls.sh's login driver: N fresh connections to a Kafka listener,
each logging in with SCRAM-SHA-256 (SaslHandshake v1, two
SaslAuthenticate) and closing; optionally over TLS.  argv: host port
user password n tls(0|1) [ca].  Prints "wall_seconds".

The client's PBKDF2 is done once (the salt and iterations of a user do not
change between logins), as a client that caches SaltedPassword would:
what is measured is the broker's side of each login, not the client's.
hashlib and hmac are Python's bindings of OpenSSL.
"""
import base64, hashlib, hmac, os, socket, ssl, struct, sys, time

host, port, user, pw, n, tls = sys.argv[1], int(sys.argv[2]), sys.argv[3], \
    sys.argv[4].encode(), int(sys.argv[5]), sys.argv[6] == '1'
ctx = ssl.create_default_context(cafile=sys.argv[7]) if tls else None
salted = {}


def req(s, api, ver, corr, body):
    s.sendall(struct.pack('>ihhih', 10 + len(body), api, ver, corr, -1) + body)
    size = struct.unpack('>i', recv(s, 4))[0]
    return recv(s, size)[4:]          # past the correlation id


def recv(s, k):
    b = b''
    while len(b) < k:
        c = s.recv(k - len(b))
        if not c:
            sys.exit('scram_logins: connection closed')
        b += c
    return b


def auth(s, corr, tok):
    r = req(s, 36, 0, corr, struct.pack('>i', len(tok)) + tok)
    err, mlen = struct.unpack('>hh', r[:4])
    if err:
        sys.exit('scram_logins: error %d' % err)
    off = 4 + max(mlen, 0)
    blen = struct.unpack('>i', r[off:off + 4])[0]
    return r[off + 4:off + 4 + blen]


def login():
    s = socket.create_connection((host, port))
    if tls:
        s = ctx.wrap_socket(s, server_hostname='localhost')
    mech = b'SCRAM-SHA-256'
    req(s, 17, 1, 1, struct.pack('>h', len(mech)) + mech)
    cnonce = base64.b64encode(os.urandom(18))
    bare = b'n=' + user.encode() + b',r=' + cnonce
    first = auth(s, 2, b'n,,' + bare)
    f = dict(x.split(b'=', 1) for x in first.split(b','))
    key = (f[b's'], f[b'i'])
    if key not in salted:
        salted[key] = hashlib.pbkdf2_hmac('sha256', pw,
                                          base64.b64decode(f[b's']),
                                          int(f[b'i']))
    sp = salted[key]
    ck = hmac.new(sp, b'Client Key', 'sha256').digest()
    stored = hashlib.sha256(ck).digest()
    without = b'c=biws,r=' + f[b'r']
    msg = bare + b',' + first + b',' + without
    sig = hmac.new(stored, msg, 'sha256').digest()
    proof = base64.b64encode(bytes(a ^ b for a, b in zip(ck, sig)))
    final = auth(s, 3, without + b',p=' + proof)
    if not final.startswith(b'v='):
        sys.exit('scram_logins: no server signature')
    s.close()


t = time.monotonic()
for _ in range(n):
    login()
print('%.3f' % (time.monotonic() - t))
