// Command nodecomponents is one multi-call binary holding the Kubernetes node components the local
// cluster runs on this machine, kubelet and kube-proxy, built from the same k8s.io/kubernetes
// version and module pins as the control plane: `nodecomponents <component> ARGS`, or invoked
// through a symlink named after the component.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // JSON log format, as upstream
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics, as upstream
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric, as upstream
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

var components = map[string]func() *cobra.Command{
	"kubelet":    func() *cobra.Command { return kubelet.NewKubeletCommand(context.Background()) },
	"kube-proxy": proxy.NewProxyCommand,
}

// dieWithParent asks the kernel to kill this process when the process that started it goes away
// (NODE_PARENT_PID set), so a killed harness leaves no kubelet behind.
func dieWithParent() {
	want, err := strconv.Atoi(os.Getenv("NODE_PARENT_PID"))
	if err != nil {
		return
	}
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0)
	if os.Getppid() != want {
		os.Exit(1)
	}
}

func main() {
	dieWithParent()
	name, args := filepath.Base(os.Args[0]), os.Args[1:]
	if _, ok := components[name]; !ok && len(args) > 0 {
		name, args = args[0], args[1:]
	}
	newCommand, ok := components[name]
	if !ok {
		fmt.Fprintln(os.Stderr, "usage: nodecomponents kubelet|kube-proxy [args]")
		os.Exit(2)
	}
	command := newCommand()
	command.SetArgs(args)
	os.Exit(cli.Run(command))
}
