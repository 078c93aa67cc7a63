package main

import (
	"archive/tar"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

const standinStamp = "v9.8.7-test"

var (
	standinOnce sync.Once
	standinPath string
	standinErr  error
)

// standin builds testdata/standin once per run: a static linux binary for
// the machine's architecture, stamped like the release build.
func standin(t *testing.T) string {
	t.Helper()
	standinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "switchyard-image-test")
		if err != nil {
			standinErr = err
			return
		}
		standinPath = filepath.Join(dir, "switchyard")
		goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
		cmd := exec.Command(goTool, "build", "-trimpath", "-ldflags", "-s -w -X main.stamped="+standinStamp,
			"-o", standinPath, "./testdata/standin")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
		if out, err := cmd.CombinedOutput(); err != nil {
			standinErr = err
			t.Logf("%s", out)
		}
	})
	if standinErr != nil {
		t.Fatalf("building the stand-in binary: %v", standinErr)
	}
	return standinPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if standinPath != "" {
		os.RemoveAll(filepath.Dir(standinPath))
	}
	os.Exit(code)
}

// testCACerts writes a one-certificate PEM bundle, so the tests do not
// depend on the machine's trust store.
func testCACerts(t *testing.T) (string, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<32, 0), IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	b := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	p := filepath.Join(t.TempDir(), "ca-certificates.crt")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, b
}

func testOptions(t *testing.T, out string) options {
	ca, _ := testCACerts(t)
	return options{
		binary:    standin(t),
		caCerts:   ca,
		caddyfile: "../../Caddyfile.example",
		version:   standinStamp,
		revision:  "0123456789abcdef0123456789abcdef01234567",
		source:    "https://github.com/switchyardhq/switchyard",
		platform:  "linux/" + runtime.GOARCH,
		created:   time.Unix(1700000000, 0).UTC(),
		out:       out,
	}
}

type layerFile struct {
	hdr  *tar.Header
	data []byte
}

// filesystem reads the image's flattened file system back from the
// tarball as a container runtime would unpack it.
func filesystem(t *testing.T, img v1.Image) map[string]layerFile {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	fs := map[string]layerFile{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		fs["/"+strings.TrimSuffix(h.Name, "/")] = layerFile{h, b}
	}
	return fs
}

func TestImageTarball(t *testing.T) {
	out := filepath.Join(t.TempDir(), "image.tar")
	o := testOptions(t, out)
	o.layout = filepath.Join(t.TempDir(), "layout")
	digest, err := run(o)
	if err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag("switchyard:" + standinStamp)
	if err != nil {
		t.Fatal(err)
	}
	// Reading it by its tag also checks the tag docker load will give it.
	img, err := tarball.ImageFromPath(out, &tag)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := img.Digest(); err != nil || got != digest {
		t.Errorf("digest read back %v (%v), written %v", got, err, digest)
	}

	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if c.User != "65532:65532" {
		t.Errorf("User %q, want 65532:65532", c.User)
	}
	if !slices.Equal(c.Entrypoint, []string{"/usr/local/bin/switchyard"}) {
		t.Errorf("Entrypoint %q", c.Entrypoint)
	}
	if !slices.Equal(c.Cmd, []string{"run", "--config", "/etc/switchyard/Caddyfile"}) {
		t.Errorf("Cmd %q", c.Cmd)
	}
	if _, ok := c.ExposedPorts["8080/tcp"]; !ok || len(c.ExposedPorts) != 1 {
		t.Errorf("ExposedPorts %v", c.ExposedPorts)
	}
	if _, ok := c.Volumes["/var/lib/switchyard"]; !ok {
		t.Errorf("Volumes %v lack the data directory", c.Volumes)
	}
	if c.WorkingDir != "/var/lib/switchyard" {
		t.Errorf("WorkingDir %q", c.WorkingDir)
	}
	for _, want := range []string{"SWITCHYARD_DATA_DIR=/var/lib/switchyard", "XDG_DATA_HOME=/var/lib/switchyard",
		"XDG_CONFIG_HOME=/var/lib/switchyard", "HOME=/var/lib/switchyard", "SWITCHYARD_LISTEN=0.0.0.0:8080"} {
		if !slices.Contains(c.Env, want) {
			t.Errorf("Env %q lacks %s", c.Env, want)
		}
	}
	for k, v := range map[string]string{
		"org.opencontainers.image.version":  standinStamp,
		"org.opencontainers.image.revision": o.revision,
		"org.opencontainers.image.source":   o.source,
	} {
		if c.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], v)
		}
	}
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s", cf.OS, cf.Architecture)
	}
	if !cf.Created.Time.Equal(o.created) {
		t.Errorf("Created %v, want %v", cf.Created.Time, o.created)
	}

	fs := filesystem(t, img)
	bin, err := os.ReadFile(o.binary)
	if err != nil {
		t.Fatal(err)
	}
	_, ca := readFileT(t, o.caCerts)
	_, caddyfile := readFileT(t, o.caddyfile)
	for _, w := range []struct {
		path string
		dir  bool
		mode int64
		uid  int
		data []byte
	}{
		{"/usr/local/bin/switchyard", false, 0o755, 0, bin},
		{"/etc/switchyard/Caddyfile", false, 0o644, 0, caddyfile},
		{"/etc/ssl/certs/ca-certificates.crt", false, 0o644, 0, ca},
		{"/etc/passwd", false, 0o644, 0, nil},
		{"/etc/group", false, 0o644, 0, nil},
		{"/etc/hosts", false, 0o644, 0, nil},
		{"/tmp", true, 0o1777, 0, nil},
		{"/var/lib/switchyard", true, 0o700, 65532, nil},
	} {
		f, ok := fs[w.path]
		if !ok {
			t.Errorf("%s missing", w.path)
			continue
		}
		if isDir := f.hdr.Typeflag == tar.TypeDir; isDir != w.dir {
			t.Errorf("%s: directory %v, want %v", w.path, isDir, w.dir)
		}
		if f.hdr.Mode != w.mode || f.hdr.Uid != w.uid || f.hdr.Gid != w.uid {
			t.Errorf("%s: mode %o %d:%d, want %o %d:%d", w.path, f.hdr.Mode, f.hdr.Uid, f.hdr.Gid, w.mode, w.uid, w.uid)
		}
		if w.data != nil && !bytes.Equal(f.data, w.data) {
			t.Errorf("%s: %d bytes differ from the source's %d", w.path, len(f.data), len(w.data))
		}
		if !f.hdr.ModTime.Equal(o.created) {
			t.Errorf("%s: mtime %v, want %v", w.path, f.hdr.ModTime, o.created)
		}
	}
	passwd := string(fs["/etc/passwd"].data)
	for _, want := range []string{"root:x:0:0:", "nonroot:x:65532:65532:nonroot:/var/lib/switchyard:"} {
		if !strings.Contains(passwd, want) {
			t.Errorf("/etc/passwd lacks %q:\n%s", want, passwd)
		}
	}
	if hosts := string(fs["/etc/hosts"].data); !strings.Contains(hosts, "127.0.0.1\tlocalhost\n") {
		t.Errorf("/etc/hosts does not name localhost:\n%s", hosts)
	}
	group := string(fs["/etc/group"].data)
	for _, want := range []string{"root:x:0:", "nonroot:x:65532:"} {
		if !strings.Contains(group, want) {
			t.Errorf("/etc/group lacks %q:\n%s", want, group)
		}
	}

	// The user must be able to write where the configuration says it
	// writes, and nowhere a root-owned file could be altered.
	for _, p := range []string{"/var/lib/switchyard", c.WorkingDir} {
		if h := fs[p].hdr; h == nil || h.Uid != 65532 || h.Mode&0o200 == 0 {
			t.Errorf("%s is not writable by the image's user: %+v", p, h)
		}
	}
	for p, f := range fs {
		h := f.hdr
		if h.Mode&0o6000 != 0 {
			t.Errorf("%s is setuid or setgid (mode %o)", p, h.Mode)
		}
		sticky := h.Typeflag == tar.TypeDir && h.Mode&0o1000 != 0
		if h.Mode&0o002 != 0 && !sticky {
			t.Errorf("%s is world-writable (mode %o)", p, h.Mode)
		}
		if h.Uid != 0 && h.Uid != 65532 {
			t.Errorf("%s owned by uid %d", p, h.Uid)
		}
	}

	// The OCI layout holds the same image.
	lp, err := layout.FromPath(o.layout)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Digest != digest {
		t.Errorf("OCI layout index %+v, want the one image %v", im.Manifests, digest)
	}
}

func readFileT(t *testing.T, p string) (string, []byte) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, b
}

// TestImageDeterministic builds twice from the same inputs: the same
// digest and the same tarball bytes. A different version must change it,
// or the comparison proves nothing.
func TestImageDeterministic(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(t, filepath.Join(dir, "a.tar"))
	d1, err := run(o)
	if err != nil {
		t.Fatal(err)
	}
	o.out = filepath.Join(dir, "b.tar")
	d2, err := run(o)
	if err != nil {
		t.Fatal(err)
	}
	if d1 != d2 {
		t.Errorf("two builds from the same inputs: %v and %v", d1, d2)
	}
	_, a := readFileT(t, filepath.Join(dir, "a.tar"))
	_, b := readFileT(t, filepath.Join(dir, "b.tar"))
	if !bytes.Equal(a, b) {
		t.Error("two builds from the same inputs wrote different tarballs")
	}
	o.out = filepath.Join(dir, "c.tar")
	o.created = o.created.Add(time.Second)
	d3, err := run(o)
	if err != nil {
		t.Fatal(err)
	}
	if d3 == d1 {
		t.Errorf("another SOURCE_DATE_EPOCH gave the same digest %v", d3)
	}
}

func TestSourceDateEpoch(t *testing.T) {
	for in, want := range map[string]int64{"": 0, "1700000000": 1700000000} {
		got, err := sourceDateEpoch(in)
		if err != nil || got.Unix() != want {
			t.Errorf("sourceDateEpoch(%q) = %v, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"yesterday", "-5", "1.5"} {
		if _, err := sourceDateEpoch(in); err == nil {
			t.Errorf("sourceDateEpoch(%q) accepted", in)
		}
	}
}

func TestImageRefusesBadInputs(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "script")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	noPEM := filepath.Join(dir, "empty.crt")
	if err := os.WriteFile(noPEM, []byte("not a certificate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := map[string]string{"amd64": "arm64"}[runtime.GOARCH]
	if other == "" {
		other = "amd64"
	}
	for _, c := range []struct {
		name string
		edit func(*options)
		want string
	}{
		{"missing CA bundle", func(o *options) { o.caCerts = filepath.Join(dir, "none.crt") }, "ca-certificates package"},
		{"CA bundle without certificates", func(o *options) { o.caCerts = noPEM }, "holds no PEM certificate"},
		{"not an executable", func(o *options) { o.binary = script }, "not a Linux executable"},
		{"other architecture", func(o *options) { o.platform = "linux/" + other }, "the image is linux/" + other},
		{"not linux", func(o *options) { o.platform = "darwin/arm64" }, "want linux/"},
		{"bad tag", func(o *options) { o.tag = "Switchyard:UPPER CASE" }, "image tag"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := testOptions(t, filepath.Join(dir, "out.tar"))
			c.edit(&o)
			_, err := run(o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
			if _, err := os.Stat(o.out); !os.IsNotExist(err) {
				t.Errorf("a failed build left %s behind", o.out)
			}
		})
	}
}

func TestTagSafe(t *testing.T) {
	for in, want := range map[string]string{
		"v1.2.0":                  "v1.2.0",
		"v1.2.0-3-gabc1234-dirty": "v1.2.0-3-gabc1234-dirty",
		"v1.2.0+build.5":          "v1.2.0-build.5",
		"-x":                      "v-x",
	} {
		if got := tagSafe(in); got != want {
			t.Errorf("tagSafe(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestImagePathsMatchSystemd keeps the image and the systemd unit on the
// same binary path and data directory, which the docs give for both.
func TestImagePathsMatchSystemd(t *testing.T) {
	_, unit := readFileT(t, "../systemd/switchyard.service")
	for _, want := range []string{
		"Environment=SWITCHYARD_DATA_DIR=" + dataDir,
		"ExecStart=" + binaryPath + " run --config " + caddyfilePath,
		"WorkingDirectory=" + dataDir,
	} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("switchyard.service lacks %q", want)
		}
	}
}

// TestGatewayDoesNotLinkImageBuilder: the image builder's dependencies
// stay out of the gateway binary.
func TestGatewayDoesNotLinkImageBuilder(t *testing.T) {
	if testing.Short() {
		t.Skip("go list of the gateway's dependencies")
	}
	out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "list", "-deps", "../../cmd/switchyard").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "github.com/switchyardhq/switchyard/internal/version") {
		t.Fatalf("go list printed no gateway package:\n%.500s", out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "go-containerregistry") {
			t.Errorf("the gateway links %s", line)
		}
	}
}
