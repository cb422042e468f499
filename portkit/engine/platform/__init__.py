"""The platform model: which bytes are AMD-only, NVIDIA-only or shared under which #if."""
