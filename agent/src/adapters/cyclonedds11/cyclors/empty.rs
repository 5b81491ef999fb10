// Nothing: the crate is fetched for its source (../install.sh), never built.
