-- issue 6: a node that runs both the realtime and the bet role debits its own players' bets
-- without the bet queue (src/shared/game/local-debits.ts). Such a bet names that node, so
-- that recovery leaves it alone while the node's heartbeat lives and resolves it as
-- uncertain once the node is gone. NULL: the bet went through the bet queue.
ALTER TABLE "bets" ADD COLUMN "debit_node" TEXT;
