"""Graph -> Plan of torch objects; graph -> standalone PyTorch script."""
