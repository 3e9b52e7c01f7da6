"""Check the initial states of RNN, LSTM and GRU ops before they run (nn.LSTM's forward checks them in Python, which
remove_exception_branches drops): LibTorch's kernels read out of bounds for a state of another batch, where eager
raises. Such ops run in PyTorch, as does the check (torch_trt::check_recurrent_states)."""

from ..rewrite import matching_nodes

_GATES = {"aten::lstm.input": 4, "aten::gru.input": 3, "aten::rnn_tanh.input": 1, "aten::rnn_relu.input": 1}


def guard_recurrent_states(graph):
    """Insert a torch_trt::check_recurrent_states of its input, states and weights before each RNN, LSTM and GRU."""
    for op, gates in _GATES.items():
        for node in matching_nodes(graph, op):
            data, states, params, _, layers, _, _, bidirectional, batch_first = node.inputs()
            with graph.insert_point_guard(node):
                if states.type().kind() == "TensorType":  # GRU and RNN take h alone
                    states = graph.insertNode(graph.create("prim::ListConstruct", [states])).output()
                    states.setType(params.type())
                check = graph.create("torch_trt::check_recurrent_states",
                                     [data, states, params, layers, bidirectional, batch_first,
                                      graph.insertConstant(gates)], 0)
                graph.insertNode(check)
