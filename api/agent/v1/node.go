package v1

import "context"

// NodeInfo is what the agent reads of its Node.
type NodeInfo struct {
	// ResourceVersion is the node's metadata.resourceVersion; a watch
	// resumes from it.
	ResourceVersion string
	// Annotations are the node's annotations.
	Annotations map[string]string
}

// NodeEvent is one event of a node watch: the node as it now is, its
// deletion, or the error that ends the watch.
type NodeEvent struct {
	// Node is the node after a change; nil when Deleted or Err is set.
	Node *NodeInfo
	// Deleted says the node was deleted.
	Deleted bool
	// Err ends the watch (e.g. the resource version is too old).
	Err error
}

// NodeClient is what the agent needs of the Kubernetes API: its own Node,
// and nothing else.
type NodeClient interface {
	// Get reads the node.
	Get(ctx context.Context) (*NodeInfo, error)
	// Watch streams the node's changes after resourceVersion until ctx is
	// cancelled, the server ends the watch (the channel is closed) or an
	// error event, after which the channel is closed too.
	Watch(ctx context.Context, resourceVersion string) (<-chan NodeEvent, error)
	// Apply sets the node's annotations with server-side apply as field
	// manager FieldManager (forcing conflicts): annotations is every
	// annotation the agent owns, and one it owned before that is missing is
	// removed. It must never create the node.
	Apply(ctx context.Context, annotations map[string]string) error
}
