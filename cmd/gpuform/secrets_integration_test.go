package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/kubeapitest"
)

// Markers that must appear in no output, file or object gpuform writes
// (except where noted).
const (
	// secretVar is the sensitive variable's value; it reaches the cluster
	// only as the InferenceService's storageUri, where it belongs.
	secretVar = "sv-int-marker-7e2c41"
	// secretCred is a credential in a kubeconfig that is never valid: as
	// a bearer token, a password and inside a client key.
	secretCred = "cred-int-marker-d93a0f"
)

// isvcGVR is KServe's InferenceService resource.
var isvcGVR = schema.GroupVersionResource{Group: "serving.kserve.io", Version: "v1beta1", Resource: "inferenceservices"}

// secretsConfig is a one-tenant stack whose model bucket is a sensitive
// variable set in a *.auto.vars.hcl file.
func secretsConfig(t *testing.T, stack string) string {
	t.Helper()
	dir := tenantsConfig(t, stack, 1)
	path := filepath.Join(dir, "main.hcl")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(src), `storage_uri = "s3://models/${each.key}"`, `storage_uri = "s3://${var.bucket}/${each.key}"`, 1)
	if text == string(src) {
		t.Fatal("tenantsConfig has no storage_uri to replace")
	}
	text += "\nvariable \"bucket\" {\n  type      = string\n  sensitive = true\n}\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secret.auto.vars.hcl"), []byte(fmt.Sprintf("bucket = %q\n", secretVar)), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// adminToken is the harness's static admin bearer token.
func adminToken(t *testing.T) string {
	t.Helper()
	kc, err := clientcmd.LoadFromFile(srv.TokenKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, ai := range kc.AuthInfos {
		if ai.Token != "" {
			return ai.Token
		}
	}
	t.Fatalf("%s has no token", srv.TokenKubeconfig)
	return ""
}

// leakCheck collects everything gpuform printed or wrote and fails the
// test for each place a secret shows up.
type leakCheck struct {
	t       *testing.T
	secrets []string
	checked int
}

func (l *leakCheck) text(where, s string) {
	l.t.Helper()
	l.checked++
	for _, sec := range l.secrets {
		if strings.Contains(s, sec) {
			l.t.Errorf("%s holds secret %q:\n%s", where, sec, s)
		}
	}
}

func (l *leakCheck) result(where string, r result) {
	l.t.Helper()
	l.text(where+": stdout", r.stdout)
	l.text(where+": stderr", r.stderr)
}

func (l *leakCheck) file(where, path string) {
	l.t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		l.t.Errorf("%s: %v", where, err)
		return
	}
	l.text(where, string(b))
}

// klogLine matches the header of a klog line (I0102 15:04:05.000000 ...).
var klogLine = regexp.MustCompile(`(?m)^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6}`)

// wantVerboseLog checks what -v level put on stderr: API request lines from
// 1 up, redacted Authorization headers from 3 up, nothing of client-go's
// own logging (klog, its curl lines) at any level.
func wantVerboseLog(t *testing.T, where string, level int, stderr string) {
	t.Helper()
	hasLines := strings.Contains(stderr, "api: GET /")
	hasFull := strings.Contains(stderr, "api: GET https://127.0.0.1:")
	hasAuth := strings.Contains(stderr, "api:   > Authorization: Bearer (redacted)")
	switch {
	case level == 0 && strings.Contains(stderr, "api: "):
		t.Errorf("%s at -v 0 logged requests:\n%s", where, stderr)
	case level >= 1 && !hasLines && !hasFull:
		t.Errorf("%s at -v %d logged no request:\n%s", where, level, stderr)
	case level >= 2 && !hasFull:
		t.Errorf("%s at -v %d logged no full URL:\n%s", where, level, stderr)
	case level >= 3 && !hasAuth:
		t.Errorf("%s at -v %d logged no redacted Authorization header:\n%s", where, level, stderr)
	case level < 3 && strings.Contains(stderr, "Authorization"):
		t.Errorf("%s at -v %d logged headers:\n%s", where, level, stderr)
	}
	for _, bad := range []string{"curl -v", "round_trippers.go", "Response Headers", "Request Headers"} {
		if strings.Contains(stderr, bad) {
			t.Errorf("%s at -v %d: client-go logged (%q):\n%s", where, level, bad, stderr)
		}
	}
	if klogLine.MatchString(stderr) {
		t.Errorf("%s at -v %d: a klog line:\n%s", where, level, stderr)
	}
}

// Secrets never leak: a sensitive variable (set in a variables file) and
// the kubeconfig's credentials appear in no output of validate, render,
// plan (every format), plan --out (refused), show, apply, drift (every
// format, the metrics file) and drift --fix, at every -v level 0..9, on
// success and on the error paths (a rejected token, password or client
// key, an unreachable server, a malformed kubeconfig, invalid
// configurations over the variable, an API server whose error quotes the
// value); nor in any label or annotation gpuform writes, and the token in
// no object at all. The variable's value does reach the cluster, in the one
// field it was meant for. Used where it would become identity or metadata
// (a for_each key, a name, a namespace, a label, an annotation, a node
// selector) it is a configuration error at its file:line:col, before any
// cluster call.
func TestSecretsNeverLeak(t *testing.T) {
	setupCluster(t)
	ctx := kubeapitest.Context(t)
	const stack = "secrets"
	dir := secretsConfig(t, stack)
	token := adminToken(t)
	check := &leakCheck{t: t, secrets: []string{secretVar, secretCred, token}}
	levels := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	// as runs gpuform with the token kubeconfig (so the real token passes
	// through the request log) at verbosity v.
	as := func(kubeconfig string, v int, args ...string) result {
		return runWith(t, nil, append([]string{"--kubeconfig", kubeconfig, "-v", fmt.Sprint(v), "--chdir", dir}, args...)...)
	}
	tokenKC := srv.TokenKubeconfig

	t.Run("offline commands", func(t *testing.T) {
		for _, args := range [][]string{{"validate"}, {"validate", "--json"}, {"render"}} {
			r := as(tokenKC, 9, args...)
			check.result(strings.Join(args, " "), r)
			if r.code != 0 {
				t.Errorf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
			}
			if args[0] == "render" && !strings.Contains(r.stdout, engine.SensitiveValue) {
				t.Errorf("render does not say it left out a sensitive object:\n%s", r.stdout)
			}
		}
	})

	t.Run("plan in every format at every level", func(t *testing.T) {
		for _, v := range levels {
			for _, format := range []string{formatText, formatJSON, formatMarkdown} {
				r := as(tokenKC, v, "plan", "--detailed-exitcode", "--format", format)
				where := fmt.Sprintf("plan --format %s -v %d", format, v)
				check.result(where, r)
				if r.code != 2 {
					t.Fatalf("%s: exit %d, want 2\n%s%s", where, r.code, r.stdout, r.stderr)
				}
				// Markdown lists created objects without their fields.
				if format != formatMarkdown && !strings.Contains(r.stdout, engine.SensitiveValue) {
					t.Errorf("%s: no %s placeholder:\n%s", where, engine.SensitiveValue, r.stdout)
				}
				wantVerboseLog(t, where, v, r.stderr)
			}
		}
	})

	t.Run("plan --out refuses sensitive values", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "refused.plan")
		r := as(tokenKC, 3, "plan", "--out", out)
		check.result("plan --out", r)
		if r.code != 1 || !strings.Contains(r.stderr, "--allow-sensitive-in-plan") {
			t.Errorf("plan --out: exit %d, want 1 naming --allow-sensitive-in-plan\n%s", r.code, r.stderr)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("plan --out left a file behind (%v)", err)
		}

		// Opted in: the file holds the value (that is what the flag
		// allows), readable by its owner only; show still hides it.
		saved := filepath.Join(t.TempDir(), "allowed.plan")
		r = as(tokenKC, 3, "plan", "--out", saved, "--allow-sensitive-in-plan")
		check.result("plan --out --allow-sensitive-in-plan", r)
		if r.code != 0 {
			t.Fatalf("plan --out --allow-sensitive-in-plan: exit %d\n%s", r.code, r.stderr)
		}
		st, err := os.Stat(saved)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("plan file mode %v, want 0600", st.Mode().Perm())
		}
		if b, _ := os.ReadFile(saved); !strings.Contains(string(b), secretVar) || strings.Contains(string(b), token) {
			t.Errorf("the allowed plan file should hold the sensitive value and never the token")
		}
		for _, v := range levels {
			for _, format := range []string{formatText, formatJSON, formatMarkdown} {
				r := as(tokenKC, v, "show", saved, "--format", format)
				where := fmt.Sprintf("show --format %s -v %d", format, v)
				check.result(where, r)
				if r.code != 0 || (format != formatMarkdown && !strings.Contains(r.stdout, engine.SensitiveValue)) {
					t.Errorf("%s: exit %d, placeholder shown %v\n%s%s", where, r.code, strings.Contains(r.stdout, engine.SensitiveValue), r.stdout, r.stderr)
				}
			}
		}
	})

	t.Run("apply, drift and drift --fix", func(t *testing.T) {
		r := as(tokenKC, 9, "apply", "--auto-approve")
		check.result("apply -v 9", r)
		if r.code != 0 {
			t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		wantVerboseLog(t, "apply -v 9", 9, r.stderr)
		if !strings.Contains(r.stderr, "api: PATCH https://127.0.0.1:") {
			t.Errorf("apply -v 9 logged no write:\n%s", r.stderr)
		}
		// A hand edit of the sensitive field: drift must report it without
		// showing either value.
		isvc := `{"spec":{"predictor":{"model":{"storageUri":"s3://hand-edited/0000"}}}}`
		if _, err := dynamicClient(t).Resource(isvcGVR).Namespace(stack+"-0000").Patch(ctx, "m-0000", types.MergePatchType, []byte(isvc), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
			t.Fatal(err)
		}
		for _, v := range levels {
			for _, format := range []string{formatText, formatJSON, formatMarkdown} {
				metrics := filepath.Join(t.TempDir(), "gpuform.prom")
				r := as(tokenKC, v, "drift", "--format", format, "--metrics-file", metrics)
				where := fmt.Sprintf("drift --format %s -v %d", format, v)
				check.result(where, r)
				check.file(where+": metrics file", metrics)
				if r.code != 2 || !strings.Contains(r.stdout, engine.SensitiveValue) {
					t.Errorf("%s: exit %d (want 2), placeholder shown %v\n%s%s", where, r.code, strings.Contains(r.stdout, engine.SensitiveValue), r.stdout, r.stderr)
				}
				wantVerboseLog(t, where, v, r.stderr)
			}
		}
		r = as(tokenKC, 9, "drift", "--fix")
		check.result("drift --fix -v 9", r)
		if r.code != 0 {
			t.Errorf("drift --fix: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		for _, format := range []string{formatText, formatJSON, formatMarkdown} {
			r := as(tokenKC, 3, "plan", "--detailed-exitcode", "--format", format)
			check.result("plan after apply --format "+format, r)
			if r.code != 0 {
				t.Errorf("plan after apply --format %s: exit %d\n%s%s", format, r.code, r.stdout, r.stderr)
			}
		}
	})

	t.Run("what gpuform wrote to the cluster", func(t *testing.T) {
		objs := stackObjects(t, stack)
		if len(objs) < 6 {
			t.Fatalf("found %d objects of stack %s, want at least 6", len(objs), stack)
		}
		found := false
		for _, o := range objs {
			where := o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
			meta, _ := json.Marshal(map[string]any{"labels": o.GetLabels(), "annotations": o.GetAnnotations()})
			check.text(where+": labels and annotations", string(meta))
			all, _ := json.Marshal(o.Object)
			for _, sec := range []string{secretCred, token} {
				if strings.Contains(string(all), sec) {
					t.Errorf("%s holds a credential", where)
				}
			}
			if o.GetKind() == "InferenceService" {
				uri, _, _ := unstructured.NestedString(o.Object, "spec", "predictor", "model", "storageUri")
				if uri != "s3://"+secretVar+"/0000" {
					t.Errorf("%s: storageUri %q, want the sensitive bucket (drift --fix restores it)", where, uri)
				}
				found = true
				unstructured.RemoveNestedField(o.Object, "spec", "predictor", "model", "storageUri")
				all, _ = json.Marshal(o.Object)
			}
			if strings.Contains(string(all), secretVar) {
				t.Errorf("%s holds the sensitive value outside the field it is for:\n%s", where, all)
			}
		}
		if !found {
			t.Errorf("no InferenceService among the stack's objects")
		}
		node, err := clientset(t).CoreV1().Nodes().Get(ctx, stack+"-gpu-0", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(node)
		check.text("Node "+node.Name, string(b))
	})

	t.Run("error paths at every level", func(t *testing.T) {
		kcDir := t.TempDir()
		kubeconfigs := map[string]string{}
		write := func(name, server, user string) {
			path := filepath.Join(kcDir, name)
			writeKubeconfig(t, path, server, user)
			kubeconfigs[name] = path
		}
		pem := func(kind string) string {
			return base64.StdEncoding.EncodeToString([]byte("-----BEGIN " + kind + "-----\n" + base64.StdEncoding.EncodeToString([]byte(secretCred)) + secretCred + "\n-----END " + kind + "-----\n"))
		}
		write("rejected-token", srv.URL, "token: "+secretCred)
		write("rejected-password", srv.URL, "username: admin\n    password: "+secretCred)
		write("bad-client-key", srv.URL, "client-certificate-data: "+pem("CERTIFICATE")+"\n    client-key-data: "+pem("RSA PRIVATE KEY"))
		write("unreachable", "https://127.0.0.1:1", "token: "+secretCred)
		write("malformed", srv.URL, "token: ["+secretCred)
		src, _ := os.ReadFile(filepath.Join(dir, "main.hcl"))
		invalidConfig := func(old, new string) string {
			bad := strings.Replace(string(src), old, new, 1)
			if bad == string(src) {
				t.Fatalf("the configuration has no %q", old)
			}
			d := t.TempDir()
			_ = os.WriteFile(filepath.Join(d, "main.hcl"), []byte(bad), 0o644)
			_ = os.WriteFile(filepath.Join(d, "secret.auto.vars.hcl"), []byte(fmt.Sprintf("bucket = %q\n", secretVar)), 0o600)
			return d
		}
		badFunction := invalidConfig("  gpus        = 1\n", "  gpus        = tonumber(var.bucket)\n")
		badValidation := invalidConfig("  type      = string\n", "  type      = string\n  validation {\n    condition     = length(var.bucket) < 5\n    error_message = \"The bucket name is too long.\"\n  }\n")

		type errCase struct {
			name       string
			kubeconfig string
			dir        string
			args       []string
			want       string
		}
		var cases []errCase
		for _, cmd := range [][]string{{"plan"}, {"apply", "--auto-approve"}, {"drift"}} {
			cases = append(cases,
				errCase{"rejected token", kubeconfigs["rejected-token"], dir, cmd, "401 Unauthorized"},
				// The API server takes no passwords: the request is anonymous.
				errCase{"rejected password", kubeconfigs["rejected-password"], dir, cmd, "403 Forbidden"},
				errCase{"bad client key", kubeconfigs["bad-client-key"], dir, cmd, "Error:"},
				errCase{"unreachable server", kubeconfigs["unreachable"], dir, cmd, "cannot reach the Kubernetes API server"},
				errCase{"malformed kubeconfig", kubeconfigs["malformed"], dir, cmd, "Error:"},
				errCase{"function error over the variable", tokenKC, badFunction, cmd, "which holds a sensitive value"},
				errCase{"failed validation of the variable", tokenKC, badValidation, cmd, "The bucket name is too long."},
			)
		}
		cases = append(cases,
			errCase{"function error over the variable", tokenKC, badFunction, []string{"validate", "--json"}, "which holds a sensitive value"},
			errCase{"failed validation of the variable", tokenKC, badValidation, []string{"validate", "--json"}, "The bucket name is too long."})
		for _, tc := range cases {
			start := time.Now()
			lv := levels
			if tc.name == "unreachable server" && tc.args[0] == "apply" {
				// Taking the lock retries a refused connection for about
				// 8 s: the lowest and the highest level only.
				lv = []int{0, 9}
			}
			for _, v := range lv {
				args := append([]string{"--kubeconfig", tc.kubeconfig, "-v", fmt.Sprint(v), "--chdir", tc.dir}, tc.args...)
				r := runWith(t, nil, args...)
				where := fmt.Sprintf("%s: %s -v %d", tc.name, strings.Join(tc.args, " "), v)
				check.result(where, r)
				if r.code != 1 || !strings.Contains(r.stdout+r.stderr, tc.want) {
					t.Errorf("%s: exit %d, want 1 with %q\nstdout:\n%s\nstderr:\n%s", where, r.code, tc.want, r.stdout, r.stderr)
				}
			}
			t.Logf("%s: %s at %d levels: %s", tc.name, strings.Join(tc.args, " "), len(lv), time.Since(start).Round(time.Millisecond))
		}
		// The invalid configurations' errors point at the declaration and
		// the expression, not at the value.
		r := runWith(t, nil, "--chdir", badValidation, "validate")
		if !strings.Contains(r.stderr, `36: variable "bucket" {`) && !strings.Contains(r.stderr, `: variable "bucket" {`) {
			t.Errorf("validate of the failed validation does not point at the declaration:\n%s", r.stderr)
		}
		r = runWith(t, nil, "--chdir", badFunction, "validate")
		if !strings.Contains(r.stderr, "gpus        = tonumber(var.bucket)") {
			t.Errorf("validate of the function error does not show the expression:\n%s", r.stderr)
		}
	})
	t.Run("sensitive values cannot become identity", func(t *testing.T) { checkIdentityRefused(t, check, dir) })
	t.Run("the API server's message echoing a value", func(t *testing.T) { checkServerEchoHidden(t, check) })
	if check.checked < 400 {
		t.Errorf("checked only %d outputs; the test did not run what it says", check.checked)
	}
	t.Logf("checked %d outputs, files and objects for secrets", check.checked)
}

// stackObjects reads back every object of the managed kinds with the
// stack's label.
func stackObjects(t *testing.T, stack string) []unstructured.Unstructured {
	t.Helper()
	ctx := kubeapitest.Context(t)
	cfg := mustRESTConfig(t)
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	dyn := dynamicClient(t)
	var out []unstructured.Unstructured
	for _, k := range engine.ManagedKinds() {
		m, err := mapper.RESTMapping(k.GroupKind(), k.Version)
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		list, err := dyn.Resource(m.Resource).List(ctx, metav1.ListOptions{LabelSelector: engine.LabelStack + "=" + stack})
		if err != nil {
			t.Fatalf("list %s: %v", m.Resource.Resource, err)
		}
		out = append(out, list.Items...)
	}
	return out
}

func dynamicClient(t *testing.T) dynamic.Interface {
	t.Helper()
	dyn, err := dynamic.NewForConfig(mustRESTConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	return dyn
}
