// Command controlplane is one multi-call binary holding a whole Kubernetes control plane, so the
// test cluster builds (and links the shared Kubernetes code) once: `controlplane <component> ARGS`
// with component etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl or exec.
// Invoked through a symlink named after a component (e.g. kubectl) it runs that component.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	_ "time/tzdata" // CronJob time zones, as in the upstream mains

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // JSON log format, as upstream
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics, as upstream
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric, as upstream
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

var components = map[string]func(args []string) int{
	"etcd":                    runEtcd,
	"exec":                    runExec,
	"kubectl":                 runKubectl,
	"kube-apiserver":          cobraMain(apiserver.NewAPIServerCommand),
	"kube-controller-manager": cobraMain(controllermanager.NewControllerManagerCommand),
	"kube-scheduler":          cobraMain(func() *cobra.Command { return scheduler.NewSchedulerCommand() }),
}

func cobraMain(newCommand func() *cobra.Command) func(args []string) int {
	return func(args []string) int {
		command := newCommand()
		command.SetArgs(args)
		return cli.Run(command)
	}
}

func main() {
	// Every component dies with the harness that started it, even when that harness is killed.
	dieWithParent()
	name, args := filepath.Base(os.Args[0]), os.Args[1:]
	if _, ok := components[name]; !ok && len(args) > 0 {
		name, args = args[0], args[1:]
	}
	run, ok := components[name]
	if !ok {
		names := make([]string, 0, len(components))
		for n := range components {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(os.Stderr, "usage: controlplane <component> [args]; components: %v\n", names)
		os.Exit(2)
	}
	os.Exit(run(args))
}
