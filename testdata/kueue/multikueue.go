package main

// MultiKueue on the manager cluster, as sigs.k8s.io/kueue/cmd/kueue sets it
// up when the MultiKueue feature gate is on (its default): the indexes, the
// admission-check controllers (MultiKueueCluster, MultiKueueConfig,
// AdmissionCheck and the workload controller that copies workloads and
// their jobs to the workers) with the adapters of the enabled job
// integrations, and the dispatcher. A worker needs nothing of it: MultiKueue
// reaches a worker with the kubeconfig in a Secret of Kueue's namespace on
// the manager, and the worker's ordinary Kueue admits the copy.

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/admissionchecks/multikueue"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	dispatcher "sigs.k8s.io/kueue/pkg/controller/workloaddispatcher"
	"sigs.k8s.io/kueue/pkg/features"
)

// ensureNamespace creates Kueue's namespace (the Configuration's
// namespace), where MultiKueue reads the workers' kubeconfig Secrets; a
// cluster where Kueue was installed from its manifests has it.
func ensureNamespace(ctx context.Context, restCfg *rest.Config, name string) error {
	cs, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: %w", name, err)
	}
	return nil
}

// setupMultiKueueIndexes is cmd/kueue's setupIndexes for MultiKueue.
func setupMultiKueueIndexes(ctx context.Context, mgr ctrl.Manager, cfg *configapi.Configuration) error {
	if !features.Enabled(features.MultiKueue) {
		return fmt.Errorf("the MultiKueue feature gate is off")
	}
	if err := multikueue.SetupIndexer(ctx, mgr.GetFieldIndexer(), *cfg.Namespace); err != nil {
		return fmt.Errorf("MultiKueue indexes: %w", err)
	}
	return nil
}

// setupMultiKueue is cmd/kueue's setupControllers for MultiKueue: the
// admission-check controllers with the adapters of the enabled
// integrations (batch/Job's sets spec.managedBy on the manager's Job, so
// that the manager's Job controller leaves it to MultiKueue), and the
// dispatcher named by the Configuration (AllAtOnce by default).
func setupMultiKueue(mgr ctrl.Manager, cfg *configapi.Configuration) error {
	adapters, err := jobframework.GetMultiKueueAdapters(sets.New(cfg.Integrations.Frameworks...))
	if err != nil {
		return fmt.Errorf("MultiKueue adapters: %w", err)
	}
	if err := multikueue.SetupControllers(mgr, *cfg.Namespace,
		multikueue.WithGCInterval(cfg.MultiKueue.GCInterval.Duration),
		multikueue.WithOrigin(ptr.Deref(cfg.MultiKueue.Origin, configapi.DefaultMultiKueueOrigin)),
		multikueue.WithWorkerLostTimeout(cfg.MultiKueue.WorkerLostTimeout.Duration),
		multikueue.WithAdapters(adapters),
		multikueue.WithDispatcherName(ptr.Deref(cfg.MultiKueue.DispatcherName, configapi.MultiKueueDispatcherModeAllAtOnce)),
		multikueue.WithClusterProfiles(cfg.MultiKueue.ClusterProfile),
	); err != nil {
		return fmt.Errorf("MultiKueue controllers: %w", err)
	}
	if name, err := dispatcher.SetupControllers(mgr, cfg, nil); err != nil {
		return fmt.Errorf("MultiKueue dispatcher %q: %w", name, err)
	}
	return nil
}
