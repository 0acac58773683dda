package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// dieWithParent asks the kernel to kill this process when its parent goes away, so a test worker
// that is killed outright (no exit handlers run) still leaves no control plane behind. Only when
// CONTROLPLANE_PARENT_PID is set: a person running the binary by hand keeps normal semantics.
func dieWithParent() {
	want, err := strconv.Atoi(os.Getenv("CONTROLPLANE_PARENT_PID"))
	if err != nil {
		return
	}
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0)
	// The parent may have died before prctl took effect.
	if os.Getppid() != want {
		os.Exit(1)
	}
}

// runExec replaces this process with the given command after dieWithParent: the node agent starts
// every container through it so containers share the control plane's parent-death guarantee.
func runExec(args []string) int {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: controlplane exec -- COMMAND [ARGS]")
		return 2
	}
	path, err := exec.LookPath(args[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "exec: %v\n", err)
		return 127
	}
	// The environment variable is for this process only; the container does not inherit it.
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if len(kv) < 24 || kv[:24] != "CONTROLPLANE_PARENT_PID=" {
			env = append(env, kv)
		}
	}
	err = syscall.Exec(path, args, env)
	fmt.Fprintf(os.Stderr, "exec %s: %v\n", path, err)
	return 126
}
