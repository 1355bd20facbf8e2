package faults

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerlane/platform/services/jobs"
	"github.com/ledgerlane/platform/services/jobs/natsqueue"
)

// The servers the suite starts. Each is looked up at these paths first (where
// the CI image has them), then on PATH; a missing one skips the suite with
// its name.
var serverBinaries = map[string][]string{
	"initdb":       {"/usr/local/bin/initdb"},
	"postgres":     {"/usr/local/bin/postgres"},
	"redis-server": {"/usr/bin/redis-server"},
	"nats-server":  {"/usr/sbin/nats-server"},
}

func findServer(name string) (string, error) {
	for _, p := range serverBinaries[name] {
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return exec.LookPath(name)
}

// proc is one child process the suite can start, kill, stop, pause and start
// again with the same command line (a restarted pod keeps its address).
type proc struct {
	name string
	path string
	args []string
	env  []string
	dir  string
	cred *syscall.Credential // run as this user (PostgreSQL refuses root)
	log  string              // stdout and stderr, appended across starts

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{}
	starts int
}

func (p *proc) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		select {
		case <-p.done:
		default:
			return fmt.Errorf("%s is already running", p.name)
		}
	}
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.path, p.args...)
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = p.env, p.dir, f, f
	// Pdeathsig: a suite killed mid-run (a test timeout, ^C) takes its
	// children with it instead of leaving servers on the machine.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Credential: p.cred}
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); f.Close(); close(done) }()
	p.cmd, p.done = cmd, done
	p.starts++
	return nil
}

func (p *proc) running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

func (p *proc) signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(sig)
	}
}

// stop sends sig and waits up to grace for the exit, then kills.
func (p *proc) stop(sig syscall.Signal, grace time.Duration) {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGCONT) // a paused process cannot exit
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
		return
	case <-time.After(grace):
	}
	_ = cmd.Process.Kill()
	<-done
}

func (p *proc) kill9() { p.stop(syscall.SIGKILL, 10*time.Second) }

// crash kills p and every process it started with SIGKILL at once, as a
// container kill or an OOM kill of its cgroup does, waits for p to exit and
// returns how many children it killed. p is stopped (SIGSTOP) first so that
// it forks no child between the listing and the kill. Killing a PostgreSQL
// postmaster alone would let each backend finish its statement and answer
// before it noticed; killing them all at once loses the answers of
// transactions that committed.
func (p *proc) crash() int {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return 0
	}
	pid := cmd.Process.Pid
	_ = syscall.Kill(pid, syscall.SIGSTOP)
	kids := childPIDs(pid)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for _, k := range kids {
		_ = syscall.Kill(k, syscall.SIGKILL)
	}
	<-done
	return len(kids)
}

// childPIDs lists the processes whose parent is pid, from /proc.
func childPIDs(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, ent := range ents {
		child, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "stat"))
		if err != nil {
			continue
		}
		// "pid (comm) state ppid ...": comm may hold spaces and parentheses,
		// so the fields are read after its last ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) >= 2 && f[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

// tail returns the last n lines of the process's log, for a failure message.
func (p *proc) tail(n int) string {
	f, err := os.Open(p.log)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// freePort returns a loopback port nobody listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitFor polls cond every interval until it holds or timeout passes.
func waitFor(timeout, interval time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
	}
}

func portOpen(port int) bool {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 200*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// cluster is the suite's whole topology.
type cluster struct {
	t    *testing.T
	dir  string // removed at the end
	bins string

	pg, redis, nats                   *proc
	pgPort, redisPort, natsPort       int
	gateway, metering, finance        *proc
	converters, jobs                  []*proc
	gatewayPort, meteringPort         int
	financeAddr                       string
	dbURL, redisURL, natsURL, baseURL string
	all                               []*proc
	// retrySchedule is the jobs replicas' webhook retry schedule
	// (suiteRetrySchedule, parsed as they parse it).
	retrySchedule []time.Duration
}

// suiteRetrySchedule is the jobs replicas' WEBHOOK_RETRY_SCHEDULE: the
// spec's five attempts, seconds apart instead of minutes and hours, so the
// suite sees a delivery exhausted and an endpoint disabled on the real clock.
const suiteRetrySchedule = "0s,2s,4s,6s,8s"

// startCluster starts everything, or skips the test when a server binary is
// missing. Cleanup stops every process and removes every directory, whatever
// the outcome.
func startCluster(t *testing.T) *cluster {
	paths := map[string]string{}
	for name := range serverBinaries {
		p, err := findServer(name)
		if err != nil {
			t.Skipf("faults: %s is not installed (looked at %v and on PATH); the fault suite needs its own PostgreSQL, Redis and NATS", name, serverBinaries[name])
		}
		paths[name] = p
	}
	dir, err := os.MkdirTemp("", "ledgerlane-faults-")
	if err != nil {
		t.Fatal(err)
	}
	// PostgreSQL runs as an unprivileged user when the suite runs as root,
	// and must be able to reach its data directory.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, dir: dir, bins: filepath.Join(dir, "bin")}
	t.Cleanup(c.close)
	if c.retrySchedule, err = jobs.ParseRetrySchedule(suiteRetrySchedule); err != nil {
		t.Fatal(err)
	}

	c.build()
	c.startPostgres(paths["initdb"], paths["postgres"])
	c.startRedis(paths["redis-server"])
	c.startNATS(paths["nats-server"])
	c.startServices()
	return c
}

func (c *cluster) close() {
	// The gateway first, so nothing new comes in; the servers last.
	for i := len(c.all) - 1; i >= 0; i-- {
		c.all[i].stop(syscall.SIGTERM, 15*time.Second)
	}
	if os.Getenv("FAULTS_KEEP") != "" {
		c.t.Logf("faults: FAULTS_KEEP is set: logs and data stay in %s", c.dir)
		return
	}
	if err := os.RemoveAll(c.dir); err != nil {
		c.t.Logf("faults: remove %s: %v", c.dir, err)
	}
}

// dumpLogs prints the tail of every log, for a failed scenario.
func (c *cluster) dumpLogs() {
	for _, p := range c.all {
		c.t.Logf("--- %s (last lines of %s)\n%s", p.name, p.log, p.tail(15))
	}
}

func (c *cluster) newProc(name, path string, args, env []string) *proc {
	p := &proc{name: name, path: path, args: args, env: append(os.Environ()[:0:0], env...), dir: c.dir,
		log: filepath.Join(c.dir, name+".log")}
	c.all = append(c.all, p)
	return p
}

// build compiles the binaries of the services, the gateway and meteringctl
// from this workspace.
func (c *cluster) build() {
	// FAULTS_SRC builds another checkout of the workspace instead of this
	// one (a snapshot, while this tree is mid-edit).
	work := os.Getenv("FAULTS_SRC")
	if work != "" {
		work = filepath.Join(work, "go.work")
	} else {
		root, err := exec.Command("go", "env", "GOWORK").Output()
		if err != nil || strings.TrimSpace(string(root)) == "" || strings.TrimSpace(string(root)) == "off" {
			c.t.Fatalf("faults: the suite builds the binaries from the go.work workspace: go env GOWORK: %q %v", root, err)
		}
		work = strings.TrimSpace(string(root))
	}
	var err error
	// A second attempt: a work tree others edit while the suite builds can
	// fail one build for a reason that is gone a moment later.
	var out []byte
	for attempt := range 2 {
		cmd := exec.Command("go", "build", "-o", c.bins+string(filepath.Separator),
			"./gateway/cmd/gateway", "./services/metering/cmd/metering", "./services/metering/cmd/meteringctl",
			"./services/finance/cmd/finance", "./services/converter/cmd/converter", "./services/jobs/cmd/jobs")
		cmd.Dir, cmd.Env = filepath.Dir(work), append(os.Environ(), "GOWORK="+work)
		if out, err = cmd.CombinedOutput(); err == nil {
			return
		}
		if attempt == 0 {
			time.Sleep(5 * time.Second)
		}
	}
	c.t.Fatalf("faults: build the binaries: %v\n%s", err, out)
}

func (c *cluster) startPostgres(initdb, postgres string) {
	t := c.t
	data := filepath.Join(c.dir, "pgdata")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skipf("faults: running as root and there is no postgres user to run PostgreSQL as: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(data, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	init := c.newProc("initdb", initdb, []string{"-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"}, nil)
	c.all = c.all[:len(c.all)-1] // a one-shot, not a server to stop
	init.cred = cred
	if err := init.start(); err != nil {
		t.Fatal(err)
	}
	<-init.done
	if init.cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("faults: initdb failed:\n%s", init.tail(30))
	}
	c.pgPort = freePort(t)
	// Durability is not under test (the machine does not crash), only the
	// server's absence: fsync off keeps the suite light on a shared box.
	c.pg = c.newProc("postgres", postgres, []string{"-D", data, "-p", strconv.Itoa(c.pgPort), "-k", data,
		"-c", "listen_addresses=127.0.0.1", "-F", "-c", "full_page_writes=off", "-c", "max_connections=200"}, nil)
	c.pg.cred = cred
	c.dbURL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.pgPort)
	c.startServer(c.pg, c.pgPort)
}

func (c *cluster) startRedis(path string) {
	c.redisPort = freePort(c.t)
	rdir := filepath.Join(c.dir, "redis")
	if err := os.Mkdir(rdir, 0o755); err != nil {
		c.t.Fatal(err)
	}
	// The append-only file keeps the counters across a stop, as a
	// production Redis does.
	c.redis = c.newProc("redis", path, []string{"--port", strconv.Itoa(c.redisPort), "--bind", "127.0.0.1",
		"--dir", rdir, "--save", "", "--appendonly", "yes", "--appendfsync", "everysec", "--daemonize", "no"}, nil)
	c.redisURL = fmt.Sprintf("redis://127.0.0.1:%d/0", c.redisPort)
	c.startServer(c.redis, c.redisPort)
}

func (c *cluster) startNATS(path string) {
	c.natsPort = freePort(c.t)
	c.nats = c.newProc("nats", path, []string{"-a", "127.0.0.1", "-p", strconv.Itoa(c.natsPort), "-js",
		"-sd", filepath.Join(c.dir, "nats")}, nil)
	c.natsURL = fmt.Sprintf("nats://127.0.0.1:%d", c.natsPort)
	c.startServer(c.nats, c.natsPort)
}

// startServer starts p and waits until port accepts connections.
func (c *cluster) startServer(p *proc, port int) {
	c.t.Helper()
	if err := p.start(); err != nil {
		c.t.Fatal(err)
	}
	if !waitFor(60*time.Second, 50*time.Millisecond, func() bool { return portOpen(port) || !p.running() }) || !p.running() {
		c.t.Fatalf("faults: %s did not start listening on %d:\n%s", p.name, port, p.tail(30))
	}
}

func (c *cluster) startServices() {
	t := c.t
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	jobKey := "faults:" + base64.StdEncoding.EncodeToString(key)
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	bin := func(name string) string { return filepath.Join(c.bins, name) }
	base := []string{"LOG_LEVEL=warn", "PATH=" + os.Getenv("PATH")}
	grpcPort := func() (int, string) { p := freePort(t); return p, fmt.Sprintf("127.0.0.1:%d", p) }

	var convAddrs, jobsAddrs []string
	var convPorts, jobsPorts []int
	for i := range 2 {
		p, a := grpcPort()
		convPorts, convAddrs = append(convPorts, p), append(convAddrs, a)
		c.converters = append(c.converters, c.newProc(fmt.Sprintf("converter-%d", i+1), bin("converter"), nil,
			append(base, "GRPC_ADDR="+a)))
	}
	finPort, finAddr := grpcPort()
	c.financeAddr = finAddr
	c.finance = c.newProc("finance", bin("finance"), nil, append(base, "GRPC_ADDR="+finAddr,
		"DATABASE_URL="+c.dbURL, "CURSOR_SECRET="+base64.StdEncoding.EncodeToString(secret),
		"CONVERTER_ADDR="+strings.Join(convAddrs, ",")))
	var metAddr string
	c.meteringPort, metAddr = grpcPort()
	c.metering = c.newProc("metering", bin("metering"), nil, append(base, "GRPC_ADDR="+metAddr,
		"DATABASE_URL="+c.dbURL, "REDIS_URL="+c.redisURL))
	for i := range 2 {
		p, a := grpcPort()
		jobsPorts, jobsAddrs = append(jobsPorts, p), append(jobsAddrs, a)
		// Both replicas reach both converters through one address list, as
		// they would reach one headless Service on Kubernetes (pkg/rpc.Dial).
		c.jobs = append(c.jobs, c.newProc(fmt.Sprintf("jobs-%d", i+1), bin("jobs"), nil, append(base, "GRPC_ADDR="+a,
			"DATABASE_URL="+c.dbURL, "NATS_URL="+c.natsURL, "CONVERTER_ADDR="+strings.Join(convAddrs, ","), "METERING_ADDR="+metAddr,
			"JOB_ENCRYPTION_KEY="+jobKey, "WORKERS=2", "WEBHOOK_ALLOW_PRIVATE=true",
			"WEBHOOK_RETRY_SCHEDULE="+suiteRetrySchedule)))
	}
	c.gatewayPort = freePort(t)
	c.baseURL = fmt.Sprintf("http://127.0.0.1:%d", c.gatewayPort)
	c.gateway = c.newProc("gateway", bin("gateway"), nil, append(base,
		fmt.Sprintf("HTTP_ADDR=127.0.0.1:%d", c.gatewayPort), fmt.Sprintf("METRICS_ADDR=127.0.0.1:%d", freePort(t)),
		"FINANCE_ADDR="+finAddr, "METERING_ADDR="+metAddr, "CONVERTER_ADDR="+strings.Join(convAddrs, ","),
		"JOBS_ADDR="+strings.Join(jobsAddrs, ","), "REDIS_URL="+c.redisURL, "NATS_URL="+c.natsURL, "SHUTDOWN_GRACE=10s",
		"PORTAL_PUBLIC_URL="+c.baseURL, "JOB_ENCRYPTION_KEY="+jobKey))

	// One at a time where they share a schema: two replicas migrating the
	// same schema at once is not what a rollout does either.
	for i, p := range c.converters {
		c.startServer(p, convPorts[i])
	}
	c.startServer(c.finance, finPort)
	c.startServer(c.metering, c.meteringPort)
	for i, p := range c.jobs {
		c.startServer(p, jobsPorts[i])
	}
	c.startServer(c.gateway, c.gatewayPort)
	if !c.waitReady(90 * time.Second) {
		c.dumpLogs()
		t.Fatalf("faults: /v1/ready did not answer 200")
	}
}

// ready reports whether GET /v1/ready answers 200.
func (c *cluster) ready() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.baseURL+"/v1/ready", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func (c *cluster) waitReady(timeout time.Duration) bool {
	return waitFor(timeout, 200*time.Millisecond, c.ready)
}

// restart starts p again and waits for its port.
func (c *cluster) restart(p *proc, port int) error {
	if err := p.start(); err != nil {
		return err
	}
	if !waitFor(60*time.Second, 50*time.Millisecond, func() bool { return portOpen(port) || !p.running() }) || !p.running() {
		return fmt.Errorf("%s did not come back:\n%s", p.name, p.tail(20))
	}
	return nil
}

// restartRetrying starts p again until it listens on port, for up to
// within: a PostgreSQL started while a killed backend still holds the old
// shared memory refuses to start, and is started again a moment later.
func (c *cluster) restartRetrying(p *proc, port int, within time.Duration) (tries int, err error) {
	deadline := time.Now().Add(within)
	for {
		tries++
		if err = c.restart(p, port); err == nil || time.Now().After(deadline) {
			return tries, err
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// portOf reads the port back from a process's GRPC_ADDR or HTTP_ADDR.
func portOf(p *proc) int {
	for _, e := range p.env {
		for _, k := range []string{"GRPC_ADDR=", "HTTP_ADDR="} {
			if strings.HasPrefix(e, k) {
				_, port, _ := net.SplitHostPort(strings.TrimPrefix(e, k))
				n, _ := strconv.Atoi(port)
				return n
			}
		}
	}
	return 0
}

// serviceStarts are how often each service process was started: a scenario
// that must recover without restarting a service compares them.
func (c *cluster) serviceStarts() map[string]int {
	out := map[string]int{}
	for _, p := range append(append([]*proc{c.gateway, c.metering, c.finance}, c.converters...), c.jobs...) {
		p.mu.Lock()
		out[p.name] = p.starts
		p.mu.Unlock()
	}
	return out
}

var errNotRunning = errors.New("not running")

// allRunning is nil when every service process is alive.
func (c *cluster) allRunning() error {
	for _, p := range append(append([]*proc{c.gateway, c.metering, c.finance}, c.converters...), c.jobs...) {
		if !p.running() {
			return fmt.Errorf("%s: %w", p.name, errNotRunning)
		}
	}
	return nil
}

// countLog counts the lines holding substr in the logs of procs.
func countLog(substr string, procs ...*proc) int {
	n := 0
	for _, p := range procs {
		b, err := os.ReadFile(p.log)
		if err != nil {
			continue
		}
		n += strings.Count(string(b), substr)
	}
	return n
}

// workStream reports how many messages the jobs' work stream stores, and
// the state of its consumer for the record.
func (c *cluster) workStream() (uint64, string, error) {
	nc, err := nats.Connect(c.natsURL, nats.Timeout(2*time.Second))
	if err != nil {
		return 0, "", err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return 0, "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	names := natsqueue.DefaultNames()
	st, err := js.Stream(ctx, names.WorkStream)
	if err != nil {
		return 0, "", err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return 0, "", err
	}
	state := fmt.Sprintf("stream first %d last %d msgs %d", info.State.FirstSeq, info.State.LastSeq, info.State.Msgs)
	if cons, err := st.Consumer(ctx, names.WorkConsumer); err == nil {
		if ci, err := cons.Info(ctx); err == nil {
			state += fmt.Sprintf("; consumer delivered %d ack floor %d pending %d ack pending %d redelivered %d",
				ci.Delivered.Stream, ci.AckFloor.Stream, ci.NumPending, ci.NumAckPending, ci.NumRedelivered)
		}
	}
	return info.State.Msgs, state, nil
}
