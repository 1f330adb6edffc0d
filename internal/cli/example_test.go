package cli_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/apply-hygiene/apply-hygiene/internal/cli"
)

// greetOptions is a verb in kubectl's style.
type greetOptions struct{ name string }

func (o *greetOptions) Complete(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		o.name = args[0]
	}
	return nil
}

func (o *greetOptions) Validate() error {
	if o.name == "" {
		return cli.BadInput(errors.New("greet needs a name"))
	}
	return nil
}

func (o *greetOptions) Run(context.Context) error {
	fmt.Println("hello,", o.name)
	return nil
}

func ExampleRunE() {
	cmd := &cobra.Command{Use: "greet NAME", RunE: cli.RunE(&greetOptions{}), SilenceErrors: true, SilenceUsage: true}
	cmd.SetArgs([]string{"web"})
	fmt.Println(cli.Code(cmd.Execute()))

	cmd = &cobra.Command{Use: "greet NAME", RunE: cli.RunE(&greetOptions{}), SilenceErrors: true, SilenceUsage: true}
	cmd.SetArgs(nil)
	err := cmd.Execute()
	fmt.Println(err, cli.Code(err))
	// Output:
	// hello, web
	// 0
	// greet needs a name 2
}
