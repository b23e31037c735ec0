// mkimage writes an OCI image layout as a tar archive (what `ctr images import` and
// `kind load image-archive` take): one layer holding one static binary, its entrypoint. The same
// inputs give the same bytes, so the same image ID.
//
//	mkimage -bin testd -name sidecarset.test/sidecar:v1 -out sidecar-v1.tar -env TESTD_VERSION=v1
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int               `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Timestamps in the archive: fixed, so that rebuilding changes nothing.
var epoch = time.Unix(0, 0).UTC()

func main() {
	bin := flag.String("bin", "", "the static binary to put in the image")
	name := flag.String("name", "", "the image reference, e.g. sidecarset.test/app:v1")
	out := flag.String("out", "", "the archive to write")
	var env []string
	flag.Func("env", "K=V in the image's config (repeatable)", func(kv string) error {
		if !strings.Contains(kv, "=") {
			return fmt.Errorf("%q is not K=V", kv)
		}
		env = append(env, kv)
		return nil
	})
	flag.Parse()
	if *bin == "" || *name == "" || *out == "" || !strings.Contains(*name, ":") {
		fail(fmt.Errorf("usage: mkimage -bin FILE -name REPO:TAG -out FILE.tar [-env K=V]..."))
	}
	program, err := os.ReadFile(*bin)
	fail(err)
	entrypoint := "/" + filepath.Base(*bin)

	layer := layerTar(entrypoint, program)
	compressed := gzipped(layer)
	config := marshal(map[string]any{
		"architecture": "amd64",
		"os":           "linux",
		"created":      epoch.Format(time.RFC3339),
		"config":       map[string]any{"Entrypoint": []string{entrypoint}, "Env": append([]string{"PATH=/"}, env...)},
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{digest(layer)}},
	})
	manifest := marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        describe("application/vnd.oci.image.config.v1+json", config, nil),
		"layers":        []descriptor{describe("application/vnd.oci.image.layer.v1.tar+gzip", compressed, nil)},
	})
	tag := (*name)[strings.LastIndex(*name, ":")+1:]
	index := marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.index.v1+json",
		"manifests": []descriptor{describe("application/vnd.oci.image.manifest.v1+json", manifest, map[string]string{
			"io.containerd.image.name":          *name,
			"org.opencontainers.image.ref.name": tag,
		})},
	})

	var archive bytes.Buffer
	w := tar.NewWriter(&archive)
	addFile(w, "oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`), 0o644)
	for _, blob := range [][]byte{compressed, config, manifest} {
		addFile(w, "blobs/sha256/"+strings.TrimPrefix(digest(blob), "sha256:"), blob, 0o644)
	}
	addFile(w, "index.json", index, 0o644)
	fail(w.Close())
	// Written whole then renamed: a reader never sees half an archive.
	fail(os.WriteFile(*out+".tmp", archive.Bytes(), 0o644))
	fail(os.Rename(*out+".tmp", *out))
	fmt.Printf("%s %s %s\n", *out, *name, digest(config))
}

// layerTar is the image's filesystem: the binary, and the empty folders a runtime mounts over.
func layerTar(entrypoint string, program []byte) []byte {
	var layer bytes.Buffer
	w := tar.NewWriter(&layer)
	for _, dir := range []string{"dev/", "etc/", "proc/", "run/", "sys/", "tmp/", "var/", "var/run/"} {
		mode := int64(0o755)
		if dir == "tmp/" {
			mode = 0o1777
		}
		fail(w.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: mode, ModTime: epoch}))
	}
	addFile(w, strings.TrimPrefix(entrypoint, "/"), program, 0o755)
	fail(w.Close())
	return layer.Bytes()
}

func addFile(w *tar.Writer, path string, data []byte, mode int64) {
	fail(w.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: path, Mode: mode, Size: int64(len(data)), ModTime: epoch}))
	_, err := w.Write(data)
	fail(err)
}

func gzipped(data []byte) []byte {
	var out bytes.Buffer
	w, err := gzip.NewWriterLevel(&out, gzip.BestSpeed)
	fail(err)
	w.ModTime = epoch
	_, err = w.Write(data)
	fail(err)
	fail(w.Close())
	return out.Bytes()
}

func describe(mediaType string, blob []byte, annotations map[string]string) descriptor {
	return descriptor{MediaType: mediaType, Digest: digest(blob), Size: len(blob), Annotations: annotations}
}

func digest(data []byte) string { return fmt.Sprintf("sha256:%x", sha256.Sum256(data)) }

func marshal(v any) []byte {
	data, err := json.Marshal(v)
	fail(err)
	return data
}

func fail(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}
