// Package builtin registers every format package with the engine. Import it
// for its side effect wherever the engine is used.
package builtin

import (
	// Each format package registers its parsers, renderers and detectors in init.
	_ "github.com/ledgerlane/platform/services/converter/engine"
	_ "github.com/ledgerlane/platform/services/converter/filefmt"
	_ "github.com/ledgerlane/platform/services/converter/mt"
	_ "github.com/ledgerlane/platform/services/converter/mx"
)
