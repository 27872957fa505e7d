package main

// The manager is built as sigs.k8s.io/kueue/cmd/kueue's main builds it
// (same packages, same order), less what needs a cluster's Service, a
// mounted metrics certificate or other clusters: internal certificate
// management, the metrics server, provisioning requests and the visibility
// API server. MultiKueue's controllers run with --multikueue (multikueue.go).

import (
	"context"
	"fmt"
	"os"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueuealpha "sigs.k8s.io/kueue/apis/kueue/v1alpha1"
	kueuev1beta1 "sigs.k8s.io/kueue/apis/kueue/v1beta1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/config"
	"sigs.k8s.io/kueue/pkg/constants"
	"sigs.k8s.io/kueue/pkg/controller/core"
	"sigs.k8s.io/kueue/pkg/controller/core/indexer"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/controller/tas"
	tasindexer "sigs.k8s.io/kueue/pkg/controller/tas/indexer"
	"sigs.k8s.io/kueue/pkg/dra"
	"sigs.k8s.io/kueue/pkg/features"
	"sigs.k8s.io/kueue/pkg/metrics"
	"sigs.k8s.io/kueue/pkg/scheduler"
	preemptexpectations "sigs.k8s.io/kueue/pkg/scheduler/preemption/expectations"
	"sigs.k8s.io/kueue/pkg/scheduler/preemption/fairsharing"
	"sigs.k8s.io/kueue/pkg/util/kubeversion"
	"sigs.k8s.io/kueue/pkg/webhooks"

	// The job integrations --frameworks may name.
	_ "sigs.k8s.io/kueue/pkg/controller/jobs/deployment"
	_ "sigs.k8s.io/kueue/pkg/controller/jobs/job"
	_ "sigs.k8s.io/kueue/pkg/controller/jobs/pod"
)

// configTemplate is Kueue's Configuration: webhooks on 127.0.0.1 with our
// certificate, no leader election, metrics or health server, no internal
// certificate management; only workloads with a queue-name label are
// managed (Kueue's default).
const configTemplate = `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %s
metrics:
  bindAddress: "0"
health:
  healthProbeBindAddress: "0"
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
clientConnection:
  qps: 200
  burst: 400
manageJobsWithoutQueueName: false
integrations:
  frameworks: [%s]
`

// writeConfig writes Kueue's Configuration file. Each of draMappings,
// RESOURCE=CLASS[,CLASS...], is a device-class mapping; with any, the
// DynamicResourceAllocation feature gate is on.
func writeConfig(path, certDir string, port int, frameworks, draMappings []string) error {
	quoted := make([]string, len(frameworks))
	for i, f := range frameworks {
		quoted[i] = fmt.Sprintf("%q", strings.TrimSpace(f))
	}
	doc := fmt.Sprintf(configTemplate, port, certDir, strings.Join(quoted, ", "))
	if len(draMappings) > 0 {
		doc += "featureGates:\n  DynamicResourceAllocation: true\nresources:\n  deviceClassMappings:\n"
		for _, m := range draMappings {
			name, classes, _ := strings.Cut(m, "=")
			quoted = quoted[:0]
			for _, c := range strings.Split(classes, ",") {
				quoted = append(quoted, fmt.Sprintf("%q", strings.TrimSpace(c)))
			}
			doc += fmt.Sprintf("  - name: %q\n    deviceClassNames: [%s]\n", name, strings.Join(quoted, ", "))
		}
	}
	return os.WriteFile(path, []byte(doc), 0o644)
}

// newScheme is cmd/kueue's scheme.
func newScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, schedulingv1.AddToScheme, resourceapi.AddToScheme,
		kueue.AddToScheme, kueuev1beta1.AddToScheme, kueuealpha.AddToScheme, configapi.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	err := jobframework.ForEachIntegration(func(_ string, cb jobframework.IntegrationCallbacks) error {
		if cb.AddToScheme != nil {
			return cb.AddToScheme(scheme)
		}
		return nil
	})
	return scheme, err
}

// newManager loads the configuration and sets up Kueue's caches, core
// controllers, webhooks, job integrations and scheduler on a new manager,
// and MultiKueue's admission-check controllers when withMultiKueue.
func newManager(ctx context.Context, restCfg *rest.Config, cfgFile string, withMultiKueue bool) (ctrl.Manager, error) {
	scheme, err := newScheme()
	if err != nil {
		return nil, err
	}
	options, cfg, err := config.Load(scheme, cfgFile)
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(cfg.FeatureGates); err != nil {
		return nil, err
	}
	// As cmd/kueue: the device-class mappings are read once, at start.
	if features.Enabled(features.DynamicResourceAllocation) && cfg.Resources != nil && len(cfg.Resources.DeviceClassMappings) > 0 {
		if err := dra.CreateMapperFromConfiguration(cfg.Resources.DeviceClassMappings); err != nil {
			return nil, fmt.Errorf("device-class mappings: %w", err)
		}
	}
	config.AddWebhookSettingsTo(&options, &cfg)
	metrics.Register()
	if *cfg.ClientConnection.QPS >= 0 {
		restCfg.QPS, restCfg.Burst = *cfg.ClientConnection.QPS, int(*cfg.ClientConnection.Burst)
	}
	mgr, err := ctrl.NewManager(restCfg, options)
	if err != nil {
		return nil, fmt.Errorf("manager: %w", err)
	}
	lqMetrics := metrics.NewLocalQueueMetricsConfig(cfg.Metrics.LocalQueueMetrics)
	cacheOptions := []schdcache.Option{schdcache.WithLocalQueueMetrics(lqMetrics)}
	if cfg.FairSharing != nil {
		cacheOptions = append(cacheOptions, schdcache.WithFairSharing(fairsharing.Enabled(cfg.FairSharing)))
	}
	cCache := schdcache.New(mgr.GetClient(), cacheOptions...)
	requeuer := qcache.NewRequeuer()
	if err := mgr.Add(requeuer); err != nil {
		return nil, err
	}
	expectations := preemptexpectations.New()
	queues := qcache.NewManager(mgr.GetClient(), cCache, requeuer,
		qcache.WithLocalQueueMetrics(lqMetrics), qcache.WithPreemptionExpectations(expectations))

	if err := indexer.Setup(ctx, mgr.GetFieldIndexer()); err != nil {
		return nil, fmt.Errorf("indexes: %w", err)
	}
	if features.Enabled(features.TopologyAwareScheduling) {
		if err := tasindexer.SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
			return nil, fmt.Errorf("TAS indexes: %w", err)
		}
	}
	if withMultiKueue {
		if err := setupMultiKueueIndexes(ctx, mgr, &cfg); err != nil {
			return nil, err
		}
	}
	if err := jobframework.SetupIndexes(ctx, mgr.GetFieldIndexer(), jobframework.WithEnabledFrameworks(cfg.Integrations.Frameworks)); err != nil {
		return nil, fmt.Errorf("job indexes: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(restCfg)
	if err != nil {
		return nil, err
	}
	versions := kubeversion.NewServerVersionFetcher(dc)
	if err := mgr.Add(versions); err != nil {
		return nil, err
	}
	if err := versions.FetchServerVersion(); err != nil {
		return nil, fmt.Errorf("server version: %w", err)
	}

	if name, err := core.SetupControllers(mgr, queues, cCache, &cfg, nil, expectations, nil); err != nil {
		return nil, fmt.Errorf("controller %s: %w", name, err)
	}
	if withMultiKueue {
		if err := setupMultiKueue(mgr, &cfg); err != nil {
			return nil, err
		}
	}
	if features.Enabled(features.TopologyAwareScheduling) {
		if name, err := tas.SetupControllers(mgr, queues, cCache, &cfg, nil); err != nil {
			return nil, fmt.Errorf("TAS controller %s: %w", name, err)
		}
	}
	if name, err := webhooks.Setup(mgr, nil); err != nil {
		return nil, fmt.Errorf("webhook %s: %w", name, err)
	}
	nsSelector, err := metav1.LabelSelectorAsSelector(cfg.ManagedJobsNamespaceSelector)
	if err != nil {
		return nil, fmt.Errorf("managedJobsNamespaceSelector: %w", err)
	}
	log := ctrl.Log.WithName("setup")
	if err := jobframework.SetupControllers(ctx, mgr, log,
		jobframework.WithManageJobsWithoutQueueName(cfg.ManageJobsWithoutQueueName),
		jobframework.WithWaitForPodsReady(cfg.WaitForPodsReady),
		jobframework.WithKubeServerVersion(versions),
		jobframework.WithEnabledFrameworks(cfg.Integrations.Frameworks),
		jobframework.WithManagerName(constants.KueueName),
		jobframework.WithLabelKeysToCopy(cfg.Integrations.LabelKeysToCopy),
		jobframework.WithCache(cCache),
		jobframework.WithQueues(queues),
		jobframework.WithObjectRetentionPolicies(cfg.ObjectRetentionPolicies),
		jobframework.WithManagedJobsNamespaceSelector(nsSelector),
	); err != nil {
		return nil, fmt.Errorf("job integrations: %w", err)
	}
	go queues.CleanUpOnContext(ctx)
	go cCache.CleanUpOnContext(ctx)

	sched := scheduler.New(queues, cCache, mgr.GetClient(), mgr.GetEventRecorderFor(constants.AdmissionName),
		scheduler.WithFairSharing(cfg.FairSharing),
		scheduler.WithPreemptionExpectations(expectations),
		scheduler.WithPodsReadyRequeuingTimestamp(configapi.EvictionTimestamp),
	)
	if err := mgr.Add(sched); err != nil {
		return nil, fmt.Errorf("scheduler: %w", err)
	}
	return mgr, nil
}
