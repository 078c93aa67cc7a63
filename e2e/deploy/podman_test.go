package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
)

// TestImageRunsInPodman runs the release image in a real container
// engine, podman (installed by scripts/podman.sh): loaded from the
// tarball make release writes and run with a named volume on its data
// directory, as docs/operations.md says to, it must answer /healthz, run
// the gateway as uid 65532, keep its store in the volume, take a key
// made with `podman exec ... switchyard bootstrap`, and carry a /v1 chat
// completion to the demo backend and back.
//
// The container shares the host's network, so it reaches the test's demo
// backend on loopback and listens on a free port of the test's choosing;
// publishing 8080 with -p is the engine's business, not the image's.
func TestImageRunsInPodman(t *testing.T) {
	if os.Geteuid() != 0 {
		// Rootless podman maps the container's users to others on the
		// host, where this test reads the process and the volume.
		t.Skip("the image is run in rootful podman, which needs root")
	}
	path, err := exec.LookPath("podman")
	if err != nil {
		t.Fatal("podman is not installed: run scripts/podman.sh as root, or apt-get install podman runc")
	}
	pm := podman{t: t, path: path}
	ri := buildReleaseImage(t)
	flags := podmanHostFlags(t)
	t.Logf("%s; run flags this host needs: %q", pm.run("--version"), flags)

	pm.run("load", "-i", ri.tar)
	t.Cleanup(func() { pm.quiet("rmi", "-f", ri.tag) })
	name := strings.ReplaceAll(strings.ReplaceAll(ri.tag, ":", "-"), ".", "-")
	pm.run("volume", "create", name)
	t.Cleanup(func() { pm.quiet("volume", "rm", "-f", name) })

	up := testupstream.Start(t, demobackend.Options{})
	port, admin := freePort(t), freePort(t)
	args := append([]string{"run", "-d", "--name", name, "--network", "host"}, flags...)
	args = append(args,
		"-v", name+":/var/lib/switchyard",
		"-e", "SWITCHYARD_LISTEN=127.0.0.1:"+port,
		"-e", "SWITCHYARD_ADMIN=localhost:"+admin,
		"-e", "SWITCHYARD_UPSTREAM="+up.URL(),
		ri.tag)
	pm.run(args...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("podman logs %s:\n%s", name, pm.logs(name))
		}
		pm.quiet("rm", "-f", "-t", "0", name)
	})

	base := "http://127.0.0.1:" + port
	waitHealthy(t, pm, name, base+"/healthz")

	// The process the engine started, seen from the host.
	pid := pm.run("inspect", "-f", "{{.State.Pid}}", name)
	status, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		t.Fatalf("the container's process %s: %v", pid, err)
	}
	for _, want := range []string{"\nUid:\t65532\t65532\t65532\t65532\n", "\nGid:\t65532\t65532\t65532\t65532\n"} {
		if !bytes.Contains(status, []byte(want)) {
			t.Errorf("the gateway does not run as 65532:65532 (want %q):\n%s", strings.TrimSpace(want), status)
		}
	}

	out := pm.run("exec", name, "/usr/local/bin/switchyard", "bootstrap", "--account", "podman", "--usd", "5.00")
	key := out[strings.LastIndex(out, "\n")+1:]
	if !strings.HasPrefix(key, "sk-") {
		t.Fatalf("bootstrap printed no key:\n%s", out)
	}
	const prompt = "Hello from a container"
	body := `{"model":"switchyard-demo","messages":[{"role":"user","content":"` + prompt + `"}]}`
	req, err := http.NewRequestWithContext(t.Context(), "POST", base+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var completion struct {
		Choices []struct {
			Message struct{ Content string }
		}
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &completion) != nil || len(completion.Choices) != 1 {
		t.Fatalf("POST /v1/chat/completions: %d %s", resp.StatusCode, b)
	}
	// The demo backend quotes the message it was sent.
	if got := completion.Choices[0].Message.Content; !strings.Contains(got, prompt) {
		t.Errorf("the answer %q does not quote %q", got, prompt)
	}
	if n := len(up.ChatRequests()); n != 1 {
		t.Errorf("the demo backend saw %d chat requests, want 1", n)
	}

	// The store and the generated secrets are in the volume, written by
	// the image's user: a new named volume takes the data directory's
	// owner from the image.
	mount := pm.run("volume", "inspect", "-f", "{{.Mountpoint}}", name)
	for _, f := range []string{".", "switchyard.db", "key_secret"} {
		fi, err := os.Stat(filepath.Join(mount, f))
		if err != nil {
			t.Errorf("the volume lacks %s: %v", f, err)
			continue
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != 65532 || st.Gid != 65532 {
			t.Errorf("%s in the volume is owned by %d:%d, want 65532:65532", f, st.Uid, st.Gid)
		}
	}
}

// podmanHostFlags are the run flags this machine needs beyond the
// documented command; docs/operations.md, "Container", has the errors
// each avoids.
func podmanHostFlags(t *testing.T) []string {
	t.Helper()
	var flags []string
	// Rootful podman asks the runtime for open-file and process limits of
	// 1048576, which needs CAP_SYS_RESOURCE; an engine inside a sandbox or
	// another container lacks it and starts nothing. Limits no higher than
	// this process's own are always granted. Podman lowers its own process
	// limit (to 32768 here) before it starts the runtime, so the process
	// limit stays well under that.
	if !hasCapability(t, capSysResource) {
		var nofile, nproc syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &nofile); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Getrlimit(rlimitNPROC, &nproc); err != nil {
			t.Fatal(err)
		}
		n := strconv.FormatUint(min(nofile.Max, 65536), 10)
		p := strconv.FormatUint(min(nproc.Max, 4096), 10)
		flags = append(flags, "--ulimit", "nofile="+n+":"+n, "--ulimit", "nproc="+p+":"+p)
	}

	// crun, podman's default runtime, refuses every container where the
	// cgroup v2 hierarchy of a hybrid (v1 and v2) host has controllers
	// of its own; runc runs them.
	if c, err := os.ReadFile("/sys/fs/cgroup/unified/cgroup.controllers"); err == nil && len(bytes.TrimSpace(c)) > 0 {
		if _, err := exec.LookPath("runc"); err != nil {
			t.Fatalf("this host's cgroups are hybrid with v2 controllers (%s), which crun refuses: "+
				"run scripts/podman.sh as root, or apt-get install runc", bytes.TrimSpace(c))
		}
		flags = append(flags, "--runtime", "runc")
	}
	return flags
}

// Linux's numbers for what package syscall does not name.
const (
	rlimitNPROC    = 6
	capSysResource = 24
)

// hasCapability reads the effective capability set of this process, which
// podman, started by it, runs with.
func hasCapability(t *testing.T, bit uint) bool {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if hex, ok := strings.CutPrefix(line, "CapEff:\t"); ok {
			caps, err := strconv.ParseUint(hex, 16, 64)
			if err != nil {
				t.Fatalf("CapEff %q: %v", hex, err)
			}
			return caps&(1<<bit) != 0
		}
	}
	t.Fatal("/proc/self/status has no CapEff line")
	return false
}

// waitHealthy polls url until it answers 200 ok, failing early when the
// container stops: the gateway opens its port only once it is ready.
func waitHealthy(t *testing.T, pm podman, name, url string) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(45 * time.Second)
	for i := 0; ; i++ {
		resp, err := client.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(b)) != "ok" {
				t.Fatalf("GET /healthz: %d %q", resp.StatusCode, b)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no answer on %s: %v", url, err)
		}
		if i%20 == 19 {
			if state := pm.run("inspect", "-f", "{{.State.Status}}", name); state != "running" {
				t.Fatalf("the container is %s before serving", state)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// podman runs the podman command line; every call has a deadline, so a
// wedged engine fails the test instead of hanging it.
type podman struct {
	t    *testing.T
	path string
}

func (p podman) cmd(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, p.path, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("%v: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	return strings.TrimSpace(stdout.String()), err
}

// run is a podman command the test needs; its failure ends the test.
func (p podman) run(args ...string) string {
	p.t.Helper()
	out, err := p.cmd(args...)
	if err != nil {
		p.t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// logs is what the container wrote to its standard output and error,
// where the gateway logs.
func (p podman) logs(name string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	b, err := exec.CommandContext(ctx, p.path, "logs", name).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("%s(podman logs: %v)", b, err)
	}
	return string(b)
}

// quiet is a clean-up command, whose failure is only logged.
func (p podman) quiet(args ...string) string {
	p.t.Helper()
	out, err := p.cmd(args...)
	if err != nil {
		p.t.Logf("podman %s: %v", strings.Join(args, " "), err)
	}
	return out
}
