// Command sarama drives Go's sarama (the Kafka library inside Filebeat and
// Telegraf, as Debian packages it) against a broker, for
// tests/bats/160-kafka-sarama.bats.  It is built in GOPATH mode from
// /usr/share/gocode, with no network (see the Makefile's clients target).
//
//	sarama produce -b ADDR -t TOPIC -v VERSION           lines on stdin
//	sarama consume -b ADDR -t TOPIC -v VERSION -n N [-p PARTITION]
//	sarama group   -b ADDR -t TOPIC -v VERSION -n N -g GROUP
//
// Every command takes -T FILE, which appends "API vN" for each request
// sarama writes (what it really sends), and -w SECONDS, how long it may
// take in all.  Exit status: 0 done, 1 sarama's error (on stderr), 64
// usage.
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/Shopify/sarama"
)

const (
	exitFail  = 1
	exitUsage = 64
)

type options struct {
	broker, topic, group, version, trace string
	n, partition, wait                   int
}

func main() {
	if len(os.Args) < 2 {
		usage("no command")
	}
	cmd := os.Args[1]
	o := parseFlags(cmd, os.Args[2:])
	cfg, err := config(o)
	if err != nil {
		fail(err)
	}
	switch cmd {
	case "produce":
		err = produce(o, cfg)
	case "consume":
		err = consume(o, cfg)
	case "group":
		err = group(o, cfg)
	}
	if err != nil {
		fail(err)
	}
}

func usage(why string) {
	fmt.Fprintf(os.Stderr, "sarama: %s\n"+
		"usage: sarama produce|consume|group -b ADDR -t TOPIC -v VERSION "+
		"[-n N] [-p PARTITION] [-g GROUP] [-T TRACE] [-w SECONDS]\n", why)
	os.Exit(exitUsage)
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "sarama: %v\n", err)
	os.Exit(exitFail)
}

func parseFlags(cmd string, args []string) *options {
	o := &options{}
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.broker, "b", "", "broker address")
	fs.StringVar(&o.topic, "t", "", "topic")
	fs.StringVar(&o.version, "v", "", "Kafka version sarama assumes")
	fs.StringVar(&o.group, "g", "", "consumer group")
	fs.StringVar(&o.trace, "T", "", "file of the requests sent")
	fs.IntVar(&o.n, "n", -1, "messages to read")
	fs.IntVar(&o.partition, "p", 0, "partition to read")
	fs.IntVar(&o.wait, "w", 30, "seconds in all")
	if err := fs.Parse(args); err != nil {
		usage(err.Error())
	}
	switch {
	case cmd != "produce" && cmd != "consume" && cmd != "group":
		usage(fmt.Sprintf("unknown command %q", cmd))
	case fs.NArg() > 0:
		usage(fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	case o.broker == "" || o.topic == "" || o.version == "":
		usage("-b, -t and -v are required")
	case cmd != "produce" && o.n < 0:
		usage(cmd + " needs -n")
	case cmd == "group" && o.group == "":
		usage("group needs -g")
	case o.wait <= 0:
		usage("-w must be positive")
	}
	return o
}

func config(o *options) (*sarama.Config, error) {
	v, err := sarama.ParseKafkaVersion(o.version)
	if err != nil {
		return nil, err
	}
	cfg := sarama.NewConfig()
	cfg.Version = v
	cfg.ClientID = "klog-test-sarama"
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Consumer.Return.Errors = true
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	if o.trace != "" {
		f, err := os.OpenFile(o.trace, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, err
		}
		cfg.Net.Proxy.Enable = true
		cfg.Net.Proxy.Dialer = &tracer{out: f}
	}
	return cfg, nil
}

// produce sends stdin's lines through an AsyncProducer (acks=all) and
// prints how many the broker acknowledged.
func produce(o *options, cfg *sarama.Config) error {
	p, err := sarama.NewAsyncProducer([]string{o.broker}, cfg)
	if err != nil {
		return err
	}
	var readErr error
	sent := make(chan int, 1)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
		n := 0
		for sc.Scan() {
			p.Input() <- &sarama.ProducerMessage{Topic: o.topic,
				Value: sarama.StringEncoder(sc.Text())}
			n++
		}
		readErr = sc.Err()
		sent <- n
	}()
	deadline := time.After(time.Duration(o.wait) * time.Second)
	total, acked, failed := -1, 0, 0
	var firstErr error
	for total < 0 || acked+failed < total {
		select {
		case <-p.Successes():
			acked++
		case e := <-p.Errors():
			failed++
			if firstErr == nil {
				firstErr = e.Err
			}
		case total = <-sent:
		case <-deadline:
			return fmt.Errorf("%d acknowledged, %d failed, then no answer "+
				"in %d s", acked, failed, o.wait)
		}
	}
	if err := p.Close(); err != nil && firstErr == nil {
		firstErr = err
	}
	fmt.Printf("%d acknowledged\n", acked)
	if readErr != nil {
		return fmt.Errorf("stdin: %v", readErr)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d not acknowledged: %v", failed, total,
			firstErr)
	}
	return nil
}

// consume reads n messages of one partition from the oldest offset.
func consume(o *options, cfg *sarama.Config) error {
	c, err := sarama.NewConsumer([]string{o.broker}, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	pc, err := c.ConsumePartition(o.topic, int32(o.partition),
		sarama.OffsetOldest)
	if err != nil {
		return err
	}
	defer pc.Close()
	w := bufio.NewWriter(os.Stdout)
	deadline := time.After(time.Duration(o.wait) * time.Second)
	for got := 0; got < o.n; got++ {
		select {
		case m := <-pc.Messages():
			fmt.Fprintf(w, "%s\n", m.Value)
		case e := <-pc.Errors():
			w.Flush()
			return e
		case <-deadline:
			w.Flush()
			return fmt.Errorf("%d of %d messages in %d s", got, o.n,
				o.wait)
		}
	}
	return w.Flush()
}

// handler prints and marks messages until n are read, then ends the
// session, whose end commits what was marked.
type handler struct {
	mu     sync.Mutex
	n, got int
	out    *bufio.Writer
	done   context.CancelFunc
}

func (h *handler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *handler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *handler) ConsumeClaim(s sarama.ConsumerGroupSession,
	c sarama.ConsumerGroupClaim) error {
	for m := range c.Messages() {
		if h.take(m) {
			s.MarkMessage(m, "")
		}
		if h.full() {
			h.done()
			return nil
		}
	}
	return nil
}

func (h *handler) take(m *sarama.ConsumerMessage) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.got >= h.n {
		return false
	}
	fmt.Fprintf(h.out, "%s\n", m.Value)
	h.got++
	return true
}

func (h *handler) full() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.got >= h.n
}

// group reads n messages as a member of a ConsumerGroup, commits them and
// leaves the group.
func group(o *options, cfg *sarama.Config) error {
	g, err := sarama.NewConsumerGroup([]string{o.broker}, o.group, cfg)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	var lastErr error
	go func() {
		for e := range g.Errors() {
			mu.Lock()
			lastErr = e
			mu.Unlock()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(),
		time.Duration(o.wait)*time.Second)
	defer cancel()
	h := &handler{n: o.n, out: bufio.NewWriter(os.Stdout), done: cancel}
	for !h.full() && ctx.Err() == nil {
		if err := g.Consume(ctx, []string{o.topic}, h); err != nil {
			g.Close()
			return err
		}
	}
	closeErr := g.Close()
	if err := h.out.Flush(); err != nil {
		return err
	}
	if !h.full() {
		mu.Lock()
		defer mu.Unlock()
		return fmt.Errorf("%d of %d messages in %d s (last error: %v)",
			h.got, h.n, o.wait, lastErr)
	}
	return closeErr
}

// tracer dials plain TCP and notes each request's API and version as
// sarama writes it.
type tracer struct {
	mu  sync.Mutex
	out *os.File
}

func (t *tracer) Dial(network, addr string) (net.Conn, error) {
	c, err := net.DialTimeout(network, addr, 30*time.Second)
	if err != nil {
		return nil, err
	}
	return &tracedConn{Conn: c, t: t}, nil
}

type tracedConn struct {
	net.Conn
	t    *tracer
	pend []byte
}

// Write follows the request framing (int32 size, int16 api, int16
// version, ...) across writes of any size.
func (c *tracedConn) Write(b []byte) (int, error) {
	c.pend = append(c.pend, b...)
	for len(c.pend) >= 8 {
		size := int(binary.BigEndian.Uint32(c.pend))
		if len(c.pend) < 4+size {
			break
		}
		api := int16(binary.BigEndian.Uint16(c.pend[4:]))
		ver := int16(binary.BigEndian.Uint16(c.pend[6:]))
		c.t.note(api, ver)
		c.pend = c.pend[4+size:]
	}
	return c.Conn.Write(b)
}

var apiNames = map[int16]string{
	0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata",
	8: "OffsetCommit", 9: "OffsetFetch", 10: "FindCoordinator",
	11: "JoinGroup", 12: "Heartbeat", 13: "LeaveGroup", 14: "SyncGroup",
	15: "DescribeGroups", 16: "ListGroups", 17: "SaslHandshake",
	18: "ApiVersions", 19: "CreateTopics", 20: "DeleteTopics",
	22: "InitProducerId", 32: "DescribeConfigs", 36: "SaslAuthenticate",
	37: "CreatePartitions",
}

func (t *tracer) note(api, ver int16) {
	name, ok := apiNames[api]
	if !ok {
		name = fmt.Sprintf("API%d", api)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.out, "%s v%d\n", name, ver)
}
