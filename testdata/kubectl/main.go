// Command kubectl is upstream kubectl from the Go module proxy
// (k8s.io/kubectl at the version of the harness's API server), for the
// side-by-side benchmark in testdata/bench when no kubectl is installed:
//
//	cd testdata/kubectl && go build -o ../../bin/kubectl .
//
// It is the body of k8s.io/kubernetes/cmd/kubectl.
package main

import (
	"os"

	_ "k8s.io/client-go/plugin/pkg/client/auth"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	logs.GlogSetter(cmd.GetLogVerbosity(os.Args)) //nolint:errcheck
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
