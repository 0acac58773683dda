// Command kindnode is one multi-call binary holding every Kubernetes program a kind node runs:
// the node's own kubeadm, kubelet and kubectl, and the programs of the control-plane and
// kube-proxy images (kube-apiserver, kube-controller-manager, kube-scheduler, etcd, kube-proxy).
// The shared Kubernetes code is compiled and linked once for all of them. Invoked through a
// symlink named after a program it runs that program, or as `kindnode <program> ARGS`.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	_ "time/tzdata" // CronJob time zones, as in the upstream mains

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/server/v3/etcdmain"
	_ "k8s.io/client-go/plugin/pkg/client/auth" // client auth plugins, as the upstream kubectl
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	_ "k8s.io/component-base/logs/json/register"          // JSON log format, as upstream
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics, as upstream
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric, as upstream
	kubectl "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubeadm "k8s.io/kubernetes/cmd/kubeadm/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

// Each program gets its arguments without its own name, as os.Args[1:] would be.
var programs = map[string]func(args []string) int{
	"kube-apiserver":          cobraMain(apiserver.NewAPIServerCommand),
	"kube-controller-manager": cobraMain(controllermanager.NewControllerManagerCommand),
	"kube-scheduler":          cobraMain(func() *cobra.Command { return scheduler.NewSchedulerCommand() }),
	"kube-proxy":              cobraMain(proxy.NewProxyCommand),
	"kubelet":                 cobraMain(func() *cobra.Command { return kubelet.NewKubeletCommand(context.Background()) }),
	"kubectl":                 runKubectl,
	// etcd's and kubeadm's mains read os.Args themselves.
	"etcd": func(args []string) int {
		etcdmain.Main(append([]string{"etcd"}, args...))
		return 0
	},
	"kubeadm": func(args []string) int {
		os.Args = append([]string{"kubeadm"}, args...)
		if err := kubeadm.Run(); err != nil {
			return 1
		}
		return 0
	},
}

func cobraMain(newCommand func() *cobra.Command) func(args []string) int {
	return func(args []string) int {
		command := newCommand()
		command.SetArgs(args)
		return cli.Run(command)
	}
}

func runKubectl(args []string) int {
	_, _ = logs.GlogSetter(kubectl.GetLogVerbosity(append([]string{"kubectl"}, args...)))
	command := kubectl.NewDefaultKubectlCommand()
	command.SetArgs(args)
	if err := cli.RunNoErrOutput(command); err != nil {
		kubectlutil.CheckErr(err)
	}
	return 0
}

func main() {
	name, args := filepath.Base(os.Args[0]), os.Args[1:]
	if _, ok := programs[name]; !ok && len(args) > 0 {
		name, args = args[0], args[1:]
	}
	run, ok := programs[name]
	if !ok {
		names := make([]string, 0, len(programs))
		for n := range programs {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(os.Stderr, "usage: kindnode <program> [args]; programs: %v\n", names)
		os.Exit(2)
	}
	os.Exit(run(args))
}
