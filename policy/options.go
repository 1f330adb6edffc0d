package policy

import (
	"maps"
	"time"
)

// Option configures an Engine.
type Option func(*options)

type options struct {
	config   Config
	sources  Sources
	debounce time.Duration
	// fullEvaluation turns off the shortcut of silent policy sets.
	fullEvaluation bool
}

func defaultOptions() options {
	return options{debounce: 500 * time.Millisecond}
}

// WithConfig sets the rule configuration, data.applyhygiene.config.
// Default: the zero Config, i.e. every rule with its default action.
func WithConfig(c Config) Option {
	return func(o *options) { o.config = c }
}

// WithModules adds user policy modules from memory, by name (the name
// appears in errors as the file, e.g. "configmap/ns/name/rules.rego").
// Default: none.
func WithModules(modules map[string]string) Option {
	return func(o *options) {
		if o.sources.Modules == nil {
			o.sources.Modules = map[string]string{}
		}
		maps.Copy(o.sources.Modules, modules)
	}
}

// WithDirs adds directories whose *.rego files (not *_test.rego, not in
// subdirectories, not hidden) are user policy modules. They are read again
// on every Reload, and watched by Watch. Default: none.
func WithDirs(dirs ...string) Option {
	return func(o *options) { o.sources.Dirs = append(o.sources.Dirs, dirs...) }
}

// WithDebounce sets how long Watch waits after the last change in a
// directory before it reloads. Default: 500ms.
func WithDebounce(d time.Duration) Option {
	return func(o *options) { o.debounce = d }
}

// WithFullEvaluation makes Evaluate run Rego for every input, also where
// the policy set is provably silent (see Evaluate), and skips the partial
// evaluation at load that proves it. For tests that hold the shortcut
// equal to a full evaluation. Default: off, Evaluate skips what it can.
func WithFullEvaluation() Option {
	return func(o *options) { o.fullEvaluation = true }
}
