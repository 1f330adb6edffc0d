package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

const (
	// ConfigMapLabel marks a ConfigMap whose data are policy modules when
	// its value is ConfigMapLabelValue.
	ConfigMapLabel = "apply-hygiene.io/policy"
	// ConfigMapLabelValue is the value of ConfigMapLabel.
	ConfigMapLabelValue = "rego"
	// ConfigMapErrorAnnotation is the annotation in which ConfigMapSource
	// writes why a ConfigMap's modules do not load, one "file:line:
	// message" per line; it is removed when they load again.
	ConfigMapErrorAnnotation = "apply-hygiene.io/policy-error"
	// configMapModulePrefix starts the name of every module from a
	// ConfigMap: configmap/<name>/<key>.
	configMapModulePrefix = "configmap/"
)

// ConfigMapSource loads user policies from the ConfigMaps labelled
// apply-hygiene.io/policy=rego in one namespace (the server's own) into an
// Engine, and keeps them loaded as they change: each data key is a module
// named configmap/<name>/<key> (keys ending in _test.rego are left out),
// loaded together with the engine's directories and other modules. When
// the new set does not compile, the engine keeps serving the last good
// set, and each ConfigMap at fault gets the problems (file:line: message)
// in the annotation apply-hygiene.io/policy-error, which is removed once it
// loads. It watches with a namespaced informer filtered by the label, so it
// needs get, list, watch and patch on configmaps in that namespace only.
//
// It is a controller-runtime Runnable (mgr.Add) that every replica runs:
// NeedLeaderElection is false.
type ConfigMapSource struct {
	engine    *Engine
	client    kubernetes.Interface
	namespace string
	selector  labels.Selector
	// loaded holds the modules of the last load attempt and problems its
	// problems by ConfigMap; only Start's goroutine touches them.
	loaded   map[string]string
	problems map[string][]string
	synced   atomic.Bool
}

// NewConfigMapSource returns a source that loads the policy ConfigMaps of
// namespace into engine, reading them with client.
func NewConfigMapSource(engine *Engine, client kubernetes.Interface, namespace string) *ConfigMapSource {
	return &ConfigMapSource{
		engine:    engine,
		client:    client,
		namespace: namespace,
		selector:  labels.SelectorFromSet(labels.Set{ConfigMapLabel: ConfigMapLabelValue}),
	}
}

// NeedLeaderElection implements controller-runtime's
// LeaderElectionRunnable: every replica evaluates policies.
func (s *ConfigMapSource) NeedLeaderElection() bool { return false }

// ReadyCheck is a controller-runtime healthz.Checker: it fails until the
// ConfigMaps were read and loaded (or found broken) once.
func (s *ConfigMapSource) ReadyCheck(_ *http.Request) error {
	if !s.synced.Load() {
		return errors.New("policy ConfigMaps not loaded yet")
	}
	return nil
}

// Start watches the ConfigMaps and reloads the engine when they change,
// once no change came for the engine's debounce time (WithDebounce). It
// blocks until ctx is done and then returns nil; it returns an error when
// the ConfigMaps cannot be listed at start.
func (s *ConfigMapSource) Start(ctx context.Context) error {
	factory := informers.NewSharedInformerFactoryWithOptions(s.client, 0, informers.WithNamespace(s.namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = s.selector.String() }))
	informer := factory.Core().V1().ConfigMaps()
	changed := newChangeSignal()
	if _, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { changed.notify() },
		UpdateFunc: func(any, any) { changed.notify() },
		DeleteFunc: func(any) { changed.notify() },
	}); err != nil {
		return fmt.Errorf("watching policy ConfigMaps: %w", err)
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), informer.Informer().HasSynced) {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("listing policy ConfigMaps in %s: cache did not sync", s.namespace)
	}
	s.loop(ctx, informer.Lister(), changed)
	return nil
}

func (s *ConfigMapSource) loop(ctx context.Context, lister listersv1.ConfigMapLister, changed <-chan struct{}) {
	s.sync(ctx, lister)
	s.synced.Store(true)
	debounce(ctx, s.engine.opts.debounce, changed, func() { s.sync(ctx, lister) })
}

// sync loads the ConfigMaps' modules when they changed since the last
// load, and marks each ConfigMap with its problems.
func (s *ConfigMapSource) sync(ctx context.Context, lister listersv1.ConfigMapLister) {
	log := logr.FromContextOrDiscard(ctx).WithValues("namespace", s.namespace)
	cms, err := lister.ConfigMaps(s.namespace).List(s.selector)
	if err != nil {
		log.Error(err, "listing policy ConfigMaps failed")
		return
	}
	// Unchanged modules (our own annotations, other metadata) need no
	// load; the marks are checked all the same.
	if modules := configMapModules(cms); !maps.Equal(s.loaded, modules) {
		s.loaded = modules
		err := s.engine.replaceModules(ctx, configMapModulePrefix, modules)
		if err != nil {
			log.Error(err, "loading policy ConfigMaps failed; the previous policies stay in force")
		} else {
			log.V(1).Info("loaded policy ConfigMaps", "version", s.engine.Status().Version, "configMaps", len(cms))
		}
		s.problems = problemsByConfigMap(err)
	}
	for _, cm := range cms {
		if err := s.mark(ctx, cm, s.problems[cm.Name]); err != nil {
			log.Error(err, "marking policy ConfigMap failed", "configMap", cm.Name)
		}
	}
}

// ConfigMapModules returns the user policy modules of the policy
// ConfigMaps cms by name, as ConfigMapSource loads them: each data key is a
// module named configmap/<name>/<key>, keys ending in _test.rego left out.
// kubectl hygiene reads the server's ConfigMaps with it.
func ConfigMapModules(cms []*corev1.ConfigMap) map[string]string { return configMapModules(cms) }

// configMapModules returns the modules of cms by name.
func configMapModules(cms []*corev1.ConfigMap) map[string]string {
	out := map[string]string{}
	for _, cm := range cms {
		for key, text := range cm.Data {
			if strings.HasSuffix(key, "_test.rego") {
				continue
			}
			out[configMapModulePrefix+cm.Name+"/"+key] = text
		}
	}
	return out
}

// problemsByConfigMap groups the problems of a load error by the ConfigMap
// whose module they are in.
func problemsByConfigMap(err error) map[string][]string {
	out := map[string][]string{}
	var le *LoadError
	if !errors.As(err, &le) {
		return out
	}
	for _, p := range le.Problems {
		rest, ok := strings.CutPrefix(p.File, configMapModulePrefix)
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(rest, "/")
		out[name] = append(out[name], p.String())
	}
	return out
}

// mark sets or removes the error annotation of cm.
func (s *ConfigMapSource) mark(ctx context.Context, cm *corev1.ConfigMap, problems []string) error {
	want := strings.Join(problems, "\n")
	if cm.Annotations[ConfigMapErrorAnnotation] == want {
		return nil
	}
	var value any
	if want != "" {
		value = want
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{ConfigMapErrorAnnotation: value}}})
	if err != nil {
		return fmt.Errorf("encoding the annotation patch: %w", err)
	}
	_, err = s.client.CoreV1().ConfigMaps(cm.Namespace).Patch(ctx, cm.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "apply-hygiene"})
	if err != nil {
		return fmt.Errorf("patching ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	return nil
}

// replaceModules replaces the in-memory modules whose name starts with
// prefix by modules, keeps the directories and the other modules, and
// reloads, as Reload does.
func (e *Engine) replaceModules(ctx context.Context, prefix string, modules map[string]string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	src := e.sources.clone()
	if src.Modules == nil {
		src.Modules = map[string]string{}
	}
	for _, name := range slices.Collect(maps.Keys(src.Modules)) {
		if strings.HasPrefix(name, prefix) {
			delete(src.Modules, name)
		}
	}
	maps.Copy(src.Modules, modules)
	e.sources = src
	return e.reloadLocked(ctx)
}
