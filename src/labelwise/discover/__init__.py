"""Finding the positives on a budget: adaptive queries over a hierarchy, and how many positives remain.

Rekatsinas, Deshpande and Parameswaran, "CRUX: Adaptive querying for
efficient crowdsourced data extraction", CIKM 2019: annotators are asked
for "up to ``k`` items of kind ``v`` not in this list of ``l``"; round by
round, an upper-confidence score of new positives per unit cost picks the
query over a hierarchy of the domain.

* :mod:`.hierarchy`: the poset of attribute conjunctions;
* :mod:`.richness`: Good-Turing, jackknife, Chao1 and iChao1 estimates of what was never returned;
* :mod:`.remaining`: the interval of the positives not found yet, and when it is a lower bound only;
* :mod:`.gain`: expected new positives of a configuration and its bootstrap variance;
* :mod:`.census`: each node's count of positives from the recaptures given the exclude lists (equal popularity);
* :mod:`.costs`: the cost model and the allowed configurations;
* :mod:`.policy`: the CRUX policy and the ``greedy``, ``root`` and ``random`` baselines;
* :mod:`.crowd`, :mod:`.simulate`: a simulated crowd, repeated runs, and the ``oracle`` that knows the true yields;
* :mod:`.successive`: the expected new positives of a query when the popularities are known (order sampling);
* :mod:`.store`, :mod:`.session`: the resumable session file.
"""

from .costs import CostModel
from .hierarchy import Hierarchy
from .policy import POLICIES, Query, QueryPolicy
from .remaining import remaining_interval
from .session import DiscoverySession
from .simulate import ORACLE, SIMULATED_POLICIES, simulate_discovery

__all__ = ["ORACLE", "POLICIES", "SIMULATED_POLICIES", "CostModel", "DiscoverySession", "Hierarchy", "Query",
           "QueryPolicy", "remaining_interval", "simulate_discovery"]
