"""The lab: benchmark runners over ../shared/data, peers, the Tavily stand-in, speed and scale benches, and the
training of the reader, the relevance evaluator and the answer decision (with their training data builders).

It sits in the source tree beside the product packages and is not in the wheel (pyproject.toml's package list
leaves it out): a user's install holds what a user runs (index, search, ask, serve, `eval folder`). Its commands run as
`python -m cragraph_lab COMMAND ...` (cragraph_lab/cli/, __main__.py); the product never imports this package, and this
package imports the product freely (it is the top layer).
"""
