// kstatus reads one Kubernetes object as JSON on stdin and prints the status the kstatus library
// (sigs.k8s.io/cli-utils/pkg/kstatus/status) computes for it, as JSON: {"status","message"}.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

func main() {
	raw, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(err)
	}
	// The apimachinery decoder, as a client reading from the API server: integers stay int64.
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw); err != nil {
		fail(err)
	}
	result, err := status.Compute(obj)
	if err != nil {
		fail(err)
	}
	out, _ := json.Marshal(map[string]string{"status": result.Status.String(), "message": result.Message})
	fmt.Println(string(out))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "kstatus:", err)
	os.Exit(1)
}
