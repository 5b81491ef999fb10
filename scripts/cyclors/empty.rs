// Nothing: the crate is fetched for its source (scripts/install-cyclone11.sh), never built.
