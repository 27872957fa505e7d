package kubeapitest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gpuform/gpuform/engine/capacity"
)

// publishKueueConfig writes the configuration the harness's Kueue runs
// with (dir/config.yaml, which testdata/kueue writes from its flags) into
// the ConfigMap where Kueue's standard install keeps it,
// kueue-system/kueue-manager-config, key controller_manager_config.yaml:
// gpuform's plan reads the device-class mappings there.
func publishKueueConfig(ctx context.Context, srv *Server, dir string) error {
	doc, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
	if err != nil {
		return fmt.Errorf("Kueue's configuration: %w", err)
	}
	cfg, err := srv.RESTConfig()
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: capacity.KueueConfigMap, Namespace: capacity.KueueNamespace, Labels: map[string]string{"app.kubernetes.io/name": "kueue"}},
		Data:       map[string]string{capacity.KueueConfigKey: string(doc)},
	}
	cms := cs.CoreV1().ConfigMaps(capacity.KueueNamespace)
	_, err = cms.Create(ctx, cm, metav1.CreateOptions{FieldValidation: "Strict"})
	if apierrors.IsAlreadyExists(err) {
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldValidation: "Strict"})
	}
	if err != nil {
		return fmt.Errorf("ConfigMap %s/%s: %w", capacity.KueueNamespace, capacity.KueueConfigMap, err)
	}
	return nil
}
