package deploy

import (
	"archive/tar"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

const repo = "../.."

// TestImageServesAsNonroot builds the release image around the real
// gateway and runs it the way a container engine would, with no engine:
// its layers unpacked into a directory, the entrypoint and command of its
// configuration run chrooted there under its user and environment. The
// gateway must start on the bundled Caddyfile, answer /healthz, and write
// its store into the data directory as uid 65532. Chroot and setuid need
// root; elsewhere the test says so and skips.
func TestImageServesAsNonroot(t *testing.T) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("running the image's file system chrooted as uid 65532 needs root on linux")
	}
	ri := buildReleaseImage(t)
	img, cf := ri.img, ri.cf
	root := t.TempDir()
	unpack(t, img, root)

	uid, gid := imageUser(t, cf.Config.User)
	if uid == 0 {
		t.Fatalf("the image runs as root (User %q)", cf.Config.User)
	}
	port, admin := freePort(t), freePort(t)
	env := append(slices.Clone(cf.Config.Env),
		// The host's network is the container's here: loopback ports
		// of this test's choosing instead of the image's 8080.
		"SWITCHYARD_LISTEN=127.0.0.1:"+port, "SWITCHYARD_LISTEN_PORT="+port,
		"SWITCHYARD_ADMIN=localhost:"+admin,
		"SWITCHYARD_UPSTREAM=http://127.0.0.1:9/v1")
	argv := append(append([]string{}, cf.Config.Entrypoint...), cf.Config.Cmd...)
	logPath := filepath.Join(t.TempDir(), "gateway.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := &exec.Cmd{
		Path: argv[0], Args: argv, Env: env, Dir: cf.Config.WorkingDir,
		Stdout: logf, Stderr: logf,
		SysProcAttr: &syscall.SysProcAttr{
			Chroot:     root,
			Credential: &syscall.Credential{Uid: uid, Gid: gid},
			Pdeathsig:  syscall.SIGKILL,
		},
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}()

	// Waiting on a process that opens its port when ready, not on a clock.
	url := "http://127.0.0.1:" + port + "/healthz"
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(b)) != "ok" {
				t.Fatalf("GET /healthz: %d %q", resp.StatusCode, b)
			}
			break
		}
		select {
		case err := <-exited:
			log, _ := os.ReadFile(logPath)
			t.Fatalf("the gateway exited before serving: %v\n%s", err, log)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logPath)
			t.Fatalf("no answer on %s: %v\n%s", url, err, log)
		}
	}

	dataDir := filepath.Join(root, "var/lib/switchyard")
	for _, f := range []string{"switchyard.db", "key_secret"} {
		fi, err := os.Stat(filepath.Join(dataDir, f))
		if err != nil {
			t.Errorf("the gateway did not write %s into its data directory: %v", f, err)
			continue
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != uid {
			t.Errorf("%s owned by uid %d, want %d", f, st.Uid, uid)
		}
	}
}

// releaseImage is the image make release would build around the real
// gateway, built once for the tests of this package.
type releaseImage struct {
	tar string // the docker load tarball
	tag string // the repository:tag it holds, unique to this run
	img v1.Image
	cf  *v1.ConfigFile
}

var (
	releaseOnce  sync.Once
	releaseBuilt *releaseImage
	releaseDir   string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if releaseDir != "" {
		os.RemoveAll(releaseDir)
	}
	os.Exit(code)
}

// buildReleaseImage builds the image with deploy/image from a static
// gateway, Caddyfile.example and the machine's CA bundle, as
// scripts/release.sh does. Its tag is unique to this process, so a run
// beside another on the same container engine neither replaces nor
// removes the other's image.
func buildReleaseImage(t *testing.T) *releaseImage {
	t.Helper()
	const caCerts = "/etc/ssl/certs/ca-certificates.crt"
	if _, err := os.Stat(caCerts); err != nil {
		t.Fatalf("the image needs a CA bundle (Debian's ca-certificates package): %v", err)
	}
	releaseOnce.Do(func() {
		dir, err := os.MkdirTemp("", "switchyard-e2e-image")
		if err != nil {
			t.Error(err)
			return
		}
		releaseDir = dir
		goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
		bin := staticGateway(t, goTool, dir)
		ri := &releaseImage{
			tar: filepath.Join(dir, "image.tar"),
			tag: fmt.Sprintf("switchyard-e2e:%d-%d", os.Getpid(), time.Now().UnixNano()),
		}
		build := exec.CommandContext(t.Context(), goTool, "run", "./deploy/image", "-binary", bin,
			"-version", "e2e", "-tag", ri.tag, "-caddyfile", "Caddyfile.example", "-ca-certs", caCerts, "-out", ri.tar)
		build.Dir = repo
		if b, err := build.CombinedOutput(); err != nil {
			t.Errorf("go run ./deploy/image: %v\n%s", err, b)
			return
		}
		tag, err := name.NewTag(ri.tag)
		if err != nil {
			t.Error(err)
			return
		}
		if ri.img, err = tarball.ImageFromPath(ri.tar, &tag); err != nil {
			t.Error(err)
			return
		}
		if ri.cf, err = ri.img.ConfigFile(); err != nil {
			t.Error(err)
			return
		}
		releaseBuilt = ri
	})
	if releaseBuilt == nil {
		t.Fatal("the release image could not be built (see the first test that tried)")
	}
	return releaseBuilt
}

// staticGateway is $SWITCHYARD_BIN when it is a static binary, the only
// kind the image can run, else one built into dir.
func staticGateway(t *testing.T, goTool, dir string) string {
	t.Helper()
	if p := os.Getenv("SWITCHYARD_BIN"); p != "" {
		f, err := elf.Open(p)
		if err == nil {
			static := true
			for _, prog := range f.Progs {
				static = static && prog.Type != elf.PT_INTERP
			}
			f.Close()
			if static {
				return p
			}
		}
		t.Logf("%s is not a static binary; building one with CGO_ENABLED=0", p)
	}
	p := filepath.Join(dir, "switchyard")
	cmd := exec.CommandContext(t.Context(), goTool, "build", "-trimpath", "-o", p, "./cmd/switchyard")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the gateway: %v\n%s", err, b)
	}
	return p
}

// unpack writes the image's flattened file system under root with the
// modes and owners of its layers, as an engine's snapshotter would.
func unpack(t *testing.T, img v1.Image, root string) {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, filepath.Clean("/"+h.Name))
		mode := os.FileMode(h.Mode).Perm()
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("%s: unexpected entry type %c", h.Name, h.Typeflag)
		}
		if h.Mode&0o1000 != 0 {
			mode |= os.ModeSticky
		}
		if err := os.Lchown(p, h.Uid, h.Gid); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
}

func imageUser(t *testing.T, user string) (uint32, uint32) {
	t.Helper()
	u, g, ok := strings.Cut(user, ":")
	uid, err1 := strconv.ParseUint(u, 10, 32)
	gid, err2 := strconv.ParseUint(g, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		t.Fatalf("User %q is not uid:gid", user)
	}
	return uint32(uid), uint32(gid)
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}
