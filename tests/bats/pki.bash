# Certificates for the TLS tests, made here by openssl (klog-security(7)).
# load pki; make_pki: $TMP/pki/{ca,other}.pem (two CAs), server.pem
# (CN=localhost, with 127.0.0.1 and localhost in its names), writer.pem
# (ca's) and stranger.pem (other's), each with its .key.

# cert NAME CN CA [DAYS]: a key and a certificate NAME.pem signed by CA
# (with 127.0.0.1 and localhost in its names), subject /O=klog tests/CN=CN,
# valid DAYS (default 2; -1: expired yesterday).
cert() {
	local d=$TMP/pki
	openssl req -newkey rsa:2048 -nodes -keyout "$d/$1.key" \
		-out "$d/$1.csr" -subj "/O=klog tests/CN=$2" 2>/dev/null &&
	printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$d/ext" &&
	openssl x509 -req -in "$d/$1.csr" -CA "$d/$3.pem" -CAkey "$d/$3.key" \
		-CAcreateserial -out "$d/$1.pem" -days "${4:-2}" -extfile "$d/ext" \
		2>/dev/null
}

# ca NAME: a self-signed CA.
ca() {
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TMP/pki/$1.key" \
		-out "$TMP/pki/$1.pem" -days 2 -subj "/CN=$1" 2>/dev/null
}

make_pki() {
	mkdir -p "$TMP/pki"
	ca ca && ca other &&
	cert server localhost ca && cert writer writer ca &&
	cert stranger stranger other
}
