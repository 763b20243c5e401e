"""`tablesight bench`: speed and accuracy on this machine, split by what each part measures."""
