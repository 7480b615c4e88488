"""What assay's web apps share (`assay review`, `assay view`): access control and hardening
(`security.py`: tokens, loopback Host checks, CSP and the other headers, CSRF) and serving
with uvicorn on a socket bound up front (`server.py`)."""
