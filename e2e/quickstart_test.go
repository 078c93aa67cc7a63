package e2e

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/testenv"
)

// TestReadmeQuickStart runs the README's quick start as a new user does:
// make run's script, then the curl block exactly as written, with only the
// key it printed and the port the test picked filled in. Every command
// must succeed, the chart must download as a PNG and the uploaded file
// must reach the answer.
func TestReadmeQuickStart(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("the quick start needs curl: apt-get install -y curl")
	}
	// make run's script runs the binary make build writes.
	if _, err := os.Stat(filepath.Join(repoRoot, "bin", "switchyard")); err != nil {
		t.Fatalf("%v: run make build first (make test does)", err)
	}
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := quickStartBlock(t, string(readme))

	listen := testenv.FreeAddr(t)
	_, port, _ := net.SplitHostPort(listen)
	e := env{
		"SWITCHYARD_DATA_DIR":    t.TempDir(),
		"SWITCHYARD_LISTEN":      listen,
		"SWITCHYARD_DEMO_LISTEN": testenv.FreeAddr(t),
		"SWITCHYARD_ADMIN":       testenv.FreeAddr(t),
		"SWITCHYARD_REVISION":    "B",
	}
	run := exec.Command(filepath.Join(repoRoot, "scripts", "run.sh"))
	run.Dir = repoRoot
	run.Env = e.environ()
	run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var log syncBuffer
	stdout, err := run.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	run.Stderr = &log
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	// The script, the gateway and the demo backend share the process
	// group the script leads.
	t.Cleanup(func() {
		_ = syscall.Kill(-run.Process.Pid, syscall.SIGTERM)
		_ = run.Wait()
		if t.Failed() {
			t.Logf("make run's output:\n%s", log.String())
		}
	})

	keys := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(io.TeeReader(stdout, &log))
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "sk-") {
				keys <- line
			}
		}
	}()
	var key string
	select {
	case key = <-keys:
	case <-time.After(60 * time.Second):
		t.Fatal("make run printed no key")
	}
	waitListening(t, listen)

	script := strings.Replace(block, "export KEY=sk-...", "export KEY="+key, 1)
	script = strings.ReplaceAll(script, "127.0.0.1:8080", "127.0.0.1:"+port)
	dir := t.TempDir()
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("the quick start failed: %v\n%s\n%s", err, out.String(), errOut.String())
	}
	got := out.String()
	for _, want := range []string{`"id":"switchyard-demo"`, `"code":"invalid_api_key"`, `"act":`, `notes.md`} {
		if !strings.Contains(got, want) {
			t.Errorf("the quick start's output lacks %s:\n%s", want, got)
		}
	}
	png, err := os.ReadFile(filepath.Join(dir, "chart.png"))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("chart.png is not a PNG (%v): %.80q", err, png)
	}
}

// quickStartBlock is the README's shell block that starts with the key.
func quickStartBlock(t *testing.T, readme string) string {
	t.Helper()
	i := strings.Index(readme, "export KEY=sk-...")
	if i < 0 {
		t.Fatal("README.md: no quick start block starting with export KEY=sk-...")
	}
	j := strings.Index(readme[i:], "```")
	if j < 0 {
		t.Fatal("README.md: the quick start block does not end")
	}
	return readme[i : i+j]
}

// waitListening waits until something accepts connections at addr.
func waitListening(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens at %s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
