"""The client (sync and async) against the emulator over real loopback HTTP, endpoint by endpoint."""
