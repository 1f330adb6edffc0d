// Command image builds a container image without Docker: one layer of
// files from this machine and a config with os/arch, user, entrypoint and
// labels, written as an OCI image layout tarball (oci-layout, index.json,
// blobs/) that `ctr images import`, `skopeo copy oci-archive:…`,
// `crane push` and `podman load` read. `make image` builds three with it:
// the server (the Dockerfile's binaries and user, with CA certificates),
// the node test's pause image and the chart's helm test image.
//
//	go run ./hack/image -name ghcr.io/apply-hygiene/apply-hygiene:0.1.0 \
//	  -o bin/images/apply-hygiene.tar -user 65532:65532 -entrypoint /apply-hygiene \
//	  -file /apply-hygiene=bin/apply-hygiene -file /etc/passwd=hack/image/rootfs/etc/passwd
//
// The layer is reproducible: entries are sorted, owned by root, and dated
// at the Unix epoch.
package main
