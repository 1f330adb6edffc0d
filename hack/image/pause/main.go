// Command pause is the sandbox container of the node that test/e2e/node
// runs: containerd's sandbox_image, built here (make image) because the
// node has no registry to pull registry.k8s.io/pause from. Like the real
// one it holds the Pod's namespaces open, doing nothing, until it is told
// to stop.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
}
