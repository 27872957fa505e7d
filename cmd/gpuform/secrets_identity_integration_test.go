package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/config"
)

// identityCases are uses of the sensitive variable var.bucket that would make
// it identity or metadata, each appended to the secrets configuration; at
// is where its expression starts.
var identityCases = []struct{ name, block, at string }{
	{"for_each key", "tenant \"leak\" {\n  for_each = toset([var.bucket])\n}\n", "toset("},
	{"instance name from a for expression", "model \"leak\" {\n  for_each    = { for k, v in tenant.t : \"${k}-${var.bucket}\" => v }\n  tenant      = each.value\n  pool        = pool.secrets\n  format      = \"onnx\"\n  storage_uri = \"s3://x\"\n}\n", "{ for k"},
	{"namespace", "tenant \"leak\" {\n  namespace = \"ns-${var.bucket}\"\n}\n", "\"ns-"},
	{"label key", "tenant \"leak\" {\n  labels = { (var.bucket) = \"x\" }\n}\n", "{ (var"},
	{"label value", "tenant \"leak\" {\n  labels = { team = var.bucket }\n}\n", "{ team"},
	{"annotation", "model \"leak\" {\n  tenant          = tenant.t[\"0000\"]\n  pool            = pool.secrets\n  format          = \"onnx\"\n  storage_uri     = \"s3://x\"\n  deployment_mode = var.bucket\n}\n", "var.bucket\n}"},
	{"node selector", "pool \"leak\" {\n  gpu           = \"H100-80GB\"\n  node_selector = { zone = var.bucket }\n}\n", "{ zone"},
}

// checkIdentityRefused runs every command that reads the configuration, in
// every format, at -v 0 and 9, on each identity case: each exits 1 with
// "Sensitive value not allowed here" at the expression's file:line:col
// (the JSON diagnostics' range), before any cluster call (the kubeconfig
// reaches no server), and no output holds the value.
func checkIdentityRefused(t *testing.T, check *leakCheck, dir string) {
	src, err := os.ReadFile(filepath.Join(dir, "main.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	unreachable := filepath.Join(t.TempDir(), "unreachable")
	writeKubeconfig(t, unreachable, "https://127.0.0.1:1", "token: "+secretCred)
	commands := [][]string{
		{"validate"}, {"validate", "--json"}, {"render"}, {"render", "--show-sensitive"},
		{"plan", "--format", formatText}, {"plan", "--format", formatJSON}, {"plan", "--format", formatMarkdown},
		{"plan", "--out", "p.plan", "--allow-sensitive-in-plan"}, {"apply", "--auto-approve"}, {"drift"}, {"drift", "--fix"},
	}
	for _, tc := range identityCases {
		d := t.TempDir()
		text := string(src) + "\n" + tc.block
		for name, body := range map[string]string{"main.hcl": text, "secret.auto.vars.hcl": fmt.Sprintf("bucket = %q\n", secretVar)} {
			if err := os.WriteFile(filepath.Join(d, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		i := len(src) + 1 + strings.Index(tc.block, tc.at)
		line, col := strings.Count(text[:i], "\n")+1, i-strings.LastIndex(text[:i], "\n")
		for _, args := range commands {
			for _, v := range []int{0, 9} {
				r := runWith(t, nil, append([]string{"--kubeconfig", unreachable, "-v", fmt.Sprint(v), "--chdir", d}, args...)...)
				where := fmt.Sprintf("%s: %s -v %d", tc.name, strings.Join(args, " "), v)
				check.result(where, r)
				out := r.stdout + r.stderr
				switch {
				case r.code != 1:
					t.Errorf("%s: exit %d, want 1\n%s", where, r.code, out)
				case !strings.Contains(out, config.SummarySensitiveHere):
					t.Errorf("%s: no %q\n%s", where, config.SummarySensitiveHere, out)
				case !strings.Contains(out, fmt.Sprintf("on main.hcl line %d", line)) && args[len(args)-1] != "--json":
					t.Errorf("%s: the error is not at main.hcl line %d\n%s", where, line, out)
				case strings.Contains(out, "cannot reach") || strings.Contains(out, "127.0.0.1:1"):
					t.Errorf("%s: called the cluster before refusing the configuration\n%s", where, out)
				}
				if _, err := os.Stat(filepath.Join(d, "p.plan")); err == nil {
					t.Errorf("%s: wrote a plan file", where)
				}
			}
		}
		r := runWith(t, nil, "--chdir", d, "validate", "--json")
		var js config.JSONDiagnostics
		if err := json.Unmarshal([]byte(r.stdout), &js); err != nil {
			t.Fatalf("%s: validate --json: %v\n%s", tc.name, err, r.stdout)
		}
		found := false
		for _, jd := range js.Diagnostics {
			found = found || jd.Summary == config.SummarySensitiveHere && jd.Range != nil && jd.Range.Filename == "main.hcl" && jd.Range.Start.Line == line && jd.Range.Start.Column == col
		}
		if !found {
			t.Errorf("%s: no %q at main.hcl:%d:%d in\n%s", tc.name, config.SummarySensitiveHere, line, col, r.stdout)
		}
	}
}

// checkServerEchoHidden applies a stack whose InferenceService a
// ValidatingAdmissionPolicy of the cluster refuses with a message that
// quotes its storageUri, the sensitive value: apply fails, reports the
// status and the object, and never the message, at -v 0 and 9.
func checkServerEchoHidden(t *testing.T, check *leakCheck) {
	ctx := context.Background()
	const stack = "secrets-echo"
	dir := secretsConfig(t, stack)
	cs := clientset(t)
	name := "gpuform-test-" + stack
	ns := stack + "-0000"
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptrTo(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{RuleWithOperations: admissionv1.RuleWithOperations{
				Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
				Rule:       admissionv1.Rule{APIGroups: []string{"serving.kserve.io"}, APIVersions: []string{"*"}, Resources: []string{"inferenceservices"}},
			}}}},
			Validations: []admissionv1.Validation{{
				Expression:        "false",
				MessageExpression: "'the bucket of ' + object.spec.predictor.model.storageUri + ' is not allowed'",
			}},
		},
	}
	if _, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: []string{ns, stack + "-probe"},
			}}}},
		},
	}
	if _, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	waitForEcho(t, stack+"-probe")
	for _, v := range []int{0, 9} {
		r := runWith(t, nil, "--kubeconfig", srv.TokenKubeconfig, "-v", fmt.Sprint(v), "--chdir", dir, "apply", "--auto-approve")
		where := fmt.Sprintf("apply refused by a policy that echoes the value -v %d", v)
		check.result(where, r)
		out := r.stdout + r.stderr
		if r.code != 1 || !strings.Contains(out, "InferenceService "+ns+"/m-0000") || !strings.Contains(out, "the API server refused it (422") || !strings.Contains(out, "not shown because the object holds values of sensitive variables") {
			t.Errorf("%s: exit %d, want 1 naming the InferenceService and the refusal without its message\n%s", where, r.code, out)
		}
	}
}

// waitForEcho waits until the policy of checkServerEchoHidden denies an
// InferenceService in namespace ns (policies take effect asynchronously),
// checking that its message does quote the storageUri: the case is real.
func waitForEcho(t *testing.T, ns string) {
	ctx := context.Background()
	if _, err := clientset(t).CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	probe := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
		"metadata": map[string]any{"name": "probe", "namespace": ns},
		"spec":     map[string]any{"predictor": map[string]any{"model": map[string]any{"storageUri": "s3://probe-marker"}}},
	}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := dynamicClient(t).Resource(isvcGVR).Namespace(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && strings.Contains(err.Error(), "s3://probe-marker") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the echoing policy does not take effect: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func ptrTo[T any](v T) *T { return &v }
