"""The connection rules' defaults, in a module of their own: the command line reads them before
it knows the serve extra is there, and connections.py (which imports uvicorn) applies them."""

DEFAULT_MAX_CONNECTIONS = 512  # open connections at once; the rest are answered 503
MAX_READ_SECONDS = 10.0  # time a client has to send a request's headers and body
