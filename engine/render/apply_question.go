package render

import (
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// ApplyQuestion is apply's question, which names the stack and the
// cluster it acts on (kubectl users look for the context).
func ApplyQuestion(p *engine.Plan) textsafe.Styled {
	if p.Destroy {
		return textsafe.Sprintf("\nDo you really want to destroy these objects of stack %s in cluster %s?\n  gpuform will delete the objects described above. There is no undo.\n  Only 'yes' will be accepted to confirm.\n\n  Enter \"yes\" to destroy: ", p.Stack, p.Source)
	}
	return textsafe.Sprintf("\nDo you want to perform these actions on stack %s in cluster %s?\n  gpuform will perform the actions described above.\n  Only 'yes' will be accepted to approve.\n\n  Enter \"yes\" to apply: ", p.Stack, p.Source)
}
