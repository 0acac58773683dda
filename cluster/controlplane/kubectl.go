package main

import (
	_ "k8s.io/client-go/plugin/pkg/client/auth" // client auth plugins, as the upstream kubectl
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

// runKubectl is kubectl of the same release as the server (the machine's kubectl is older than
// the supported skew).
func runKubectl(args []string) int {
	argv := append([]string{"kubectl"}, args...)
	_, _ = logs.GlogSetter(cmd.GetLogVerbosity(argv))
	command := cmd.NewDefaultKubectlCommand()
	command.SetArgs(args)
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
	return 0
}
