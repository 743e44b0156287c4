"""The production graph (DESIGN I1): a flow file of film steps, run node by node through the ledger."""
