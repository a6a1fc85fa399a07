# The CLI's own basics: schema output and error handling of bad inputs.
TESTS = [
    DiffTest(name="schema_sql_lists_tables", cmd=["schema", "--sql"], out="schema/schema.sql"),
    DiffTest(name="unknown_command_is_exit_2", cmd=["frobnicate"], out="schema/unknown_command.err",
             rc=2, stderr=True),
    DiffTest(name="unknown_option_is_exit_2", cmd=["schema", "--bogus"], out="schema/unknown_option.err",
             rc=2, stderr=True),
]
