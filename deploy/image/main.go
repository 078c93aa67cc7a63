// Command image writes Switchyard's container image from a static
// binary, with no container daemon and no registry: the release builds
// it on machines that reach neither (scripts/release.sh). Everything in
// the image is made here or copied from named files, and every timestamp
// is fixed, so the same inputs give the same image digest.
//
//	go run ./deploy/image -binary dist/switchyard-v1.2.0-linux-amd64 \
//	  -version v1.2.0 -caddyfile Caddyfile.example \
//	  -out dist/switchyard-v1.2.0-image.tar
//
// The tarball loads with `docker load` and `podman load`; -layout also
// writes an OCI image layout directory (skopeo, crane, registries' push
// tools). docs/operations.md, "Deploying", shows how to run it.
package main

import (
	"archive/tar"
	"bytes"
	"crypto/x509"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's layout. The paths are those of the systemd unit
// (deploy/systemd/switchyard.service), so the docs and the CLI examples
// hold for both.
const (
	binaryPath    = "/usr/local/bin/switchyard"
	caddyfilePath = "/etc/switchyard/Caddyfile"
	caCertsPath   = "/etc/ssl/certs/ca-certificates.crt"
	dataDir       = "/var/lib/switchyard"
	listenPort    = "8080"

	// distroless's nonroot user, so volumes and security policies
	// written for distroless images fit this one.
	uid      = 65532
	userName = "nonroot"
)

type options struct {
	binary    string // static gateway binary for platform
	caCerts   string // PEM bundle copied in as the image's trust store
	caddyfile string // copied to caddyfilePath; empty: none in the image
	version   string
	revision  string
	source    string
	tag       string // repository:tag in the tarball; default switchyard:<version>
	platform  string // os/arch
	created   time.Time
	out       string // image tarball
	layout    string // OCI layout directory; empty: none
}

func main() {
	var o options
	flag.StringVar(&o.binary, "binary", "", "static switchyard binary for -platform (required)")
	flag.StringVar(&o.out, "out", "", "image tarball to write, loadable by docker load and podman load (required)")
	flag.StringVar(&o.version, "version", "", "version stamp: the image tag and the org.opencontainers.image.version label (required)")
	flag.StringVar(&o.revision, "revision", "", "source commit, the org.opencontainers.image.revision label")
	flag.StringVar(&o.source, "source", "https://github.com/switchyardhq/switchyard", "source repository, the org.opencontainers.image.source label")
	flag.StringVar(&o.tag, "tag", "", "repository:tag recorded in the tarball (default switchyard:<version>)")
	flag.StringVar(&o.platform, "platform", "linux/amd64", "os/arch of the binary and the image")
	flag.StringVar(&o.caCerts, "ca-certs", "/etc/ssl/certs/ca-certificates.crt", "PEM bundle of trusted CAs copied into the image (Debian's ca-certificates package)")
	flag.StringVar(&o.caddyfile, "caddyfile", "", "Caddyfile copied to "+caddyfilePath+" (optional)")
	flag.StringVar(&o.layout, "layout", "", "also write the image as an OCI image layout in this directory (optional)")
	flag.Parse()
	var err error
	if o.created, err = sourceDateEpoch(os.Getenv("SOURCE_DATE_EPOCH")); err != nil {
		fail(err)
	}
	if flag.NArg() > 0 {
		fail(fmt.Errorf("unexpected argument %q", flag.Arg(0)))
	}
	if o.binary == "" || o.out == "" || o.version == "" {
		fail(errors.New("-binary, -out and -version are required"))
	}
	digest, err := run(o)
	if err != nil {
		fail(err)
	}
	fmt.Printf("%s %s\n", o.out, digest)
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "image: %v\n", err)
	os.Exit(1)
}

// sourceDateEpoch is the image's one timestamp: SOURCE_DATE_EPOCH
// (reproducible-builds.org) when set, else the Unix epoch, never the
// clock, which would change the digest of every build.
func sourceDateEpoch(s string) (time.Time, error) {
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a count of seconds", s)
	}
	return time.Unix(n, 0).UTC(), nil
}

// run builds the image and writes it, returning its digest.
func run(o options) (v1.Hash, error) {
	img, ref, err := build(o)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := writeTarball(o.out, ref, img); err != nil {
		return v1.Hash{}, err
	}
	if o.layout != "" {
		if err := os.RemoveAll(o.layout); err != nil {
			return v1.Hash{}, err
		}
		p, err := layout.Write(o.layout, empty.Index)
		if err != nil {
			return v1.Hash{}, fmt.Errorf("OCI layout %s: %w", o.layout, err)
		}
		if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{
			"org.opencontainers.image.ref.name": ref.TagStr(),
		})); err != nil {
			return v1.Hash{}, fmt.Errorf("OCI layout %s: %w", o.layout, err)
		}
	}
	return img.Digest()
}

// writeTarball writes beside the target and renames, so a failed build
// leaves no half-written image behind to be shipped.
func writeTarball(out string, ref name.Tag, img v1.Image) error {
	tmp := out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	err = tarball.Write(ref, img, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, out)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", out, err)
	}
	return nil
}

// build assembles the image: a base layer with what a static Go program
// expects of a system (users, CA bundle, /tmp, the data directory), then
// a layer with the gateway, so a release changes only the second.
func build(o options) (v1.Image, name.Tag, error) {
	goos, goarch, ok := strings.Cut(o.platform, "/")
	if !ok || goos != "linux" {
		return nil, name.Tag{}, fmt.Errorf("-platform %q: want linux/<arch>", o.platform)
	}
	tag := o.tag
	if tag == "" {
		tag = "switchyard:" + tagSafe(o.version)
	}
	ref, err := name.NewTag(tag)
	if err != nil {
		return nil, name.Tag{}, fmt.Errorf("image tag %q: %w", tag, err)
	}
	bin, err := os.ReadFile(o.binary)
	if err != nil {
		return nil, name.Tag{}, err
	}
	if err := checkBinary(o.binary, bin, goarch); err != nil {
		return nil, name.Tag{}, err
	}
	ca, err := readCACerts(o.caCerts)
	if err != nil {
		return nil, name.Tag{}, err
	}

	base := []entry{
		dir("etc", 0o755, 0),
		file("etc/passwd", 0o644, 0, []byte(
			"root:x:0:0:root:/root:/sbin/nologin\n"+
				userName+":x:65532:65532:"+userName+":"+dataDir+":/sbin/nologin\n")),
		file("etc/group", 0o644, 0, []byte("root:x:0:\n"+userName+":x:65532:\n")),
		// Container engines mount their own over it; this one is for
		// runtimes that do not, where the default admin address
		// (localhost:2019) would otherwise go to DNS and fail.
		file("etc/hosts", 0o644, 0, []byte("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")),
		dir("etc/ssl", 0o755, 0),
		dir("etc/ssl/certs", 0o755, 0),
		file(caCertsPath[1:], 0o644, 0, ca),
		dir("root", 0o700, 0),
		dir("tmp", 0o1777, 0),
		dir("var", 0o755, 0),
		dir("var/lib", 0o755, 0),
		// The one place the gateway writes; 0700 like the unit's
		// StateDirectoryMode, since it holds the generated secrets.
		dir(dataDir[1:], 0o700, uid),
	}
	app := []entry{
		dir("usr", 0o755, 0),
		dir("usr/local", 0o755, 0),
		dir("usr/local/bin", 0o755, 0),
		file(binaryPath[1:], 0o755, 0, bin),
	}
	if o.caddyfile != "" {
		cf, err := os.ReadFile(o.caddyfile)
		if err != nil {
			return nil, name.Tag{}, err
		}
		app = append(app,
			dir("etc", 0o755, 0),
			dir("etc/switchyard", 0o755, 0),
			file(caddyfilePath[1:], 0o644, 0, cf))
	}

	// Docker's schema 2 media types, which every engine and registry
	// takes: a docker load tarball has no room for the manifest's media
	// type, and readers rebuild a schema 2 manifest from it, so with these
	// the digest printed here is the one the tarball yields when read back
	// (crane, skopeo) and the one the OCI layout holds.
	img := empty.Image
	for _, l := range []struct {
		by      string
		entries []entry
	}{
		{"switchyard base: users, CA certificates, /tmp, " + dataDir, base},
		{"switchyard " + o.version + ": " + binaryPath, app},
	} {
		layer, err := tarLayer(l.entries, o.created)
		if err != nil {
			return nil, name.Tag{}, err
		}
		img, err = mutate.Append(img, mutate.Addendum{
			Layer:     layer,
			History:   v1.History{Created: v1.Time{Time: o.created}, CreatedBy: l.by},
			MediaType: types.DockerLayer,
		})
		if err != nil {
			return nil, name.Tag{}, err
		}
	}

	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, name.Tag{}, err
	}
	cfg = cfg.DeepCopy()
	cfg.Created = v1.Time{Time: o.created}
	cfg.OS, cfg.Architecture = goos, goarch
	cfg.Author = ""
	cfg.Config = v1.Config{
		User:       strconv.Itoa(uid) + ":" + strconv.Itoa(uid),
		Entrypoint: []string{binaryPath},
		Cmd:        []string{"run", "--config", caddyfilePath},
		WorkingDir: dataDir,
		Env: []string{
			"PATH=/usr/local/bin:/usr/bin:/bin",
			// The unit's settings (deploy/systemd/switchyard.service):
			// the store, the secrets and Caddy's own state all go to
			// the data directory, the one volume.
			"SWITCHYARD_DATA_DIR=" + dataDir,
			"XDG_DATA_HOME=" + dataDir,
			"XDG_CONFIG_HOME=" + dataDir,
			// Engines derive HOME from /etc/passwd, but not every runtime
			// does, and Caddy warns and writes to ./caddy without it.
			"HOME=" + dataDir,
			// Caddyfile.example binds loopback by default, which no
			// one outside the container could reach.
			"SWITCHYARD_LISTEN=0.0.0.0:" + listenPort,
		},
		ExposedPorts: map[string]struct{}{listenPort + "/tcp": {}},
		Volumes:      map[string]struct{}{dataDir: {}},
		Labels: map[string]string{
			"org.opencontainers.image.title":    "switchyard",
			"org.opencontainers.image.version":  o.version,
			"org.opencontainers.image.source":   o.source,
			"org.opencontainers.image.revision": o.revision,
			"org.opencontainers.image.created":  o.created.Format(time.RFC3339),
		},
	}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, name.Tag{}, err
	}
	return img, ref, nil
}

var tagUnsafe = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// tagSafe turns a version stamp (git describe, perhaps with a + of
// build metadata) into a valid image tag.
func tagSafe(v string) string {
	v = tagUnsafe.ReplaceAllString(v, "-")
	if v == "" || v[0] == '.' || v[0] == '-' {
		v = "v" + v
	}
	if len(v) > 128 {
		v = v[:128]
	}
	return v
}

// checkBinary refuses what would not start in the image: a file that is
// not a Linux executable for the image's architecture, or one that needs
// a dynamic loader, since the image has no libc.
func checkBinary(p string, b []byte, goarch string) error {
	want := map[string]elf.Machine{
		"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64, "arm": elf.EM_ARM,
		"386": elf.EM_386, "ppc64le": elf.EM_PPC64, "s390x": elf.EM_S390, "riscv64": elf.EM_RISCV,
	}[goarch]
	if want == elf.EM_NONE {
		return fmt.Errorf("-platform linux/%s: unknown architecture", goarch)
	}
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("%s is not a Linux executable: %w", p, err)
	}
	if f.Machine != want {
		return fmt.Errorf("%s is built for %v, the image is linux/%s", p, f.Machine, goarch)
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked and the image has no libc: build it with CGO_ENABLED=0", p)
		}
	}
	return nil
}

// readCACerts reads the trust store to copy in. Without one every TLS
// connection the gateway makes (upstream, PostgreSQL, Redis, S3) would
// fail at run time, so its absence stops the build instead.
func readCACerts(p string) ([]byte, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("CA certificates: %w (on Debian or Ubuntu install the ca-certificates package, or pass -ca-certs)", err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("CA certificates: %s holds no PEM certificate", p)
	}
	return b, nil
}

type entry struct {
	name string
	mode int64
	uid  int
	data []byte
	dir  bool
}

func dir(name string, mode int64, uid int) entry {
	return entry{name: name, mode: mode, uid: uid, dir: true}
}

func file(name string, mode int64, uid int, data []byte) entry {
	return entry{name: name, mode: mode, uid: uid, data: data}
}

// tarLayer writes entries in the given order, every header built from
// the entry alone and the fixed time, so the layer's bytes (and digest)
// depend on nothing on the build machine.
func tarLayer(entries []entry, mtime time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{
			Name:    e.name,
			Mode:    e.mode,
			Uid:     e.uid,
			Gid:     e.uid,
			Uname:   "root",
			Gname:   "root",
			ModTime: mtime,
			Format:  tar.FormatPAX,
		}
		if e.uid == uid {
			h.Uname, h.Gname = userName, userName
		}
		if e.dir {
			h.Typeflag = tar.TypeDir
			h.Name = path.Clean(e.name) + "/"
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}, tarball.WithMediaType(types.DockerLayer))
}
