package cli

import (
	"github.com/spf13/cobra"

	"github.com/scry-pm/scry/internal/toolchain"
)

// newCCCommand is `scry cc` / `scry c++`: every argument goes to clang unchanged.
func newCCCommand(name string, cxx bool) *cobra.Command {
	lang := "C"
	if cxx {
		lang = "C++"
	}
	return &cobra.Command{
		Use:                name + " [clang arguments]",
		Short:              "compile and link " + lang + " with scry's instrumentation (a drop-in clang)",
		Long:               "Runs Debian's clang with scry's LLVM pass loaded and, when linking an executable, scry's runtime linked in (shared libraries get none: they use the executable's). Accepts any clang arguments, response files included; usable as CC/CXX in make, CMake, configure and ccache builds (docs/build-systems.md). SCRY_CLANG / SCRY_CLANGXX choose the clang; SCRY_PROJECT_ROOT names the root of the program's own sources, where reports place findings (default: the enclosing version-control checkout, else the directories with build files; docs/build-systems.md).",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && (args[0] == "--help" || args[0] == "-h") {
				return cmd.Help()
			}
			return toolchain.Exec(cxx, args)
		},
	}
}
