#!/bin/sh
# Install what `make check` needs on Debian, or say exactly how to.
set -u
missing=
need() { # package, then a file that proves it is installed
	[ -e "$2" ] || missing="$missing $1"
}
need build-essential /usr/bin/make
need gcc /usr/bin/gcc
need zlib1g-dev /usr/include/zlib.h
need libdeflate-dev /usr/include/libdeflate.h
need libisal-dev /usr/include/isa-l/crc.h
need libsnappy-dev /usr/include/snappy-c.h
need liblz4-dev /usr/include/lz4frame.h
need libzstd-dev /usr/include/zstd.h
need libzookeeper-mt-dev /usr/include/zookeeper/zookeeper.h
need libssl-dev /usr/include/openssl/ssl.h
need openssl /usr/bin/openssl
need curl /usr/bin/curl
need zookeeper /usr/share/zookeeper/bin/zkServer.sh
need libcmocka-dev /usr/include/cmocka.h
need bats /usr/bin/bats
need parallel /usr/bin/parallel
need mandoc /usr/bin/mandoc
need jq /usr/bin/jq
need clang /usr/bin/clang
need procps /usr/bin/pgrep
need python3 /usr/bin/python3
need zsh /usr/bin/zsh
need kcat /usr/bin/kcat
need python3-kafka /usr/lib/python3/dist-packages/kafka/__init__.py
need python3-confluent-kafka /usr/lib/python3/dist-packages/confluent_kafka/__init__.py
need prometheus /usr/bin/promtool
# Go's sarama, the Kafka library inside Filebeat and Telegraf (bats 160).
need golang-go /usr/bin/go
need golang-github-shopify-sarama-dev /usr/share/gocode/src/github.com/Shopify/sarama/sarama.go
# rsyslog's omkafka, the log shipper users point at the Kafka listener
# (bats 162); the package's postinst starts no daemon without an init.
need rsyslog /usr/sbin/rsyslogd
need rsyslog-kafka /usr/lib/x86_64-linux-gnu/rsyslog/omkafka.so
[ -z "$missing" ] && exit 0
cmd="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" -ne 0 ]; then
	echo "make check: missing packages; run as root:" >&2
	echo "  apt-get update && $cmd" >&2
	exit 1
fi
echo "make check: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq && $cmd
